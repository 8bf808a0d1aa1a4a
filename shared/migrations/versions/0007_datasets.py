"""datasets and their versions

Revision ID: 0007_datasets
Revises: 0006_tools_and_datasets
Create Date: 2026-11-30 09:00:00
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = '0007_datasets'
down_revision = '0006_tools_and_datasets'
branch_labels = None
depends_on = None

UtcDateTime = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")


def upgrade() -> None:
    op.create_table(
        'datasets',
        sa.Column('id', sa.String(length=36), primary_key=True),
        sa.Column('tenant_id', sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
                  sa.ForeignKey('tenants.id', ondelete='CASCADE'), nullable=False),
        sa.Column('name', sa.String(length=200), nullable=False),
        sa.Column('status', sa.String(length=16), nullable=False),
        sa.Column('version', sa.Integer(), nullable=True),
        sa.Column('building_version', sa.Integer(), nullable=True),
        sa.Column('is_default', sa.Boolean(), nullable=False),
        sa.Column('annotations', sa.JSON(), nullable=True),
        sa.Column('error', sa.JSON(), nullable=True),
        sa.Column('sources', sa.JSON(), nullable=False),
        sa.Column('source_url', sa.Text(), nullable=True),
        sa.Column('import_seq', sa.Integer(), nullable=False),
        sa.Column('created_at', UtcDateTime, nullable=False),
        sa.Column('updated_at', UtcDateTime, nullable=False),
        sa.Column('heartbeat_at', UtcDateTime, nullable=True),
        sa.Column('deleted_at', UtcDateTime, nullable=True),
    )
    op.create_index('ix_datasets_tenant_created', 'datasets', ['tenant_id', 'created_at'])
    op.create_index('ix_datasets_status_heartbeat', 'datasets', ['status', 'heartbeat_at'])
    op.create_table(
        'dataset_versions',
        sa.Column('dataset_id', sa.String(length=36),
                  sa.ForeignKey('datasets.id', ondelete='CASCADE'), primary_key=True),
        sa.Column('version', sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column('tables', sa.JSON(), nullable=False),
        sa.Column('rows', sa.BigInteger(), nullable=False),
        sa.Column('seconds', sa.Numeric(12, 3), nullable=False),
        sa.Column('created_at', UtcDateTime, nullable=False),
    )
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.create_index('ix_jobs_dataset', ['dataset_id', 'dataset_version'])


def downgrade() -> None:
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.drop_index('ix_jobs_dataset')
    op.drop_table('dataset_versions')
    op.drop_index('ix_datasets_status_heartbeat', table_name='datasets')
    op.drop_index('ix_datasets_tenant_created', table_name='datasets')
    op.drop_table('datasets')
