"""Live datasets, scheduled refresh and data_as_of

A dataset may now be live (queries run on the source; a version is its introspected
schema and profile, no file) and may refresh on a cron schedule in a time zone. The
beat's tick finds due datasets through ``ix_datasets_next_refresh`` and claims each
slot once by inserting its row in ``dataset_refresh_slots`` (the primary key makes a
second claim of the same slot fail: no expiring lock). A version records the engine
that answers it; a job records the moment its data is from (``data_as_of``).

Revision ID: 0011_live_datasets_and_refresh
Revises: 0010_dataset_import_attempts
Create Date: 2026-12-02 02:00:00
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = '0011_live_datasets_and_refresh'
down_revision = '0010_dataset_import_attempts'
branch_labels = None
depends_on = None

UtcDateTime = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")


def upgrade() -> None:
    with op.batch_alter_table('datasets', schema=None) as batch_op:
        batch_op.add_column(sa.Column('mode', sa.String(length=16), nullable=False,
                                      server_default='snapshot'))
        batch_op.add_column(sa.Column('allow_writable_role', sa.Boolean(), nullable=False,
                                      server_default=sa.false()))
        batch_op.add_column(sa.Column('warnings', sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column('refresh_cron', sa.String(length=100), nullable=True))
        batch_op.add_column(sa.Column('refresh_timezone', sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column('next_refresh_at', UtcDateTime, nullable=True))
        batch_op.create_index('ix_datasets_next_refresh', ['next_refresh_at'])
    with op.batch_alter_table('dataset_versions', schema=None) as batch_op:
        batch_op.add_column(sa.Column('engine', sa.JSON(), nullable=True))
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('data_as_of', UtcDateTime, nullable=True))
    op.create_table(
        'dataset_refresh_slots',
        sa.Column('dataset_id', sa.String(length=36),
                  sa.ForeignKey('datasets.id', ondelete='CASCADE'), primary_key=True),
        sa.Column('slot_at', UtcDateTime, primary_key=True),
        sa.Column('version', sa.Integer(), nullable=True),
        sa.Column('created_at', UtcDateTime, nullable=False),
    )


def downgrade() -> None:
    op.drop_table('dataset_refresh_slots')
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.drop_column('data_as_of')
    with op.batch_alter_table('dataset_versions', schema=None) as batch_op:
        batch_op.drop_column('engine')
    with op.batch_alter_table('datasets', schema=None) as batch_op:
        batch_op.drop_index('ix_datasets_next_refresh')
        for column in ('next_refresh_at', 'refresh_timezone', 'refresh_cron', 'warnings',
                       'allow_writable_role', 'mode'):
            batch_op.drop_column(column)
