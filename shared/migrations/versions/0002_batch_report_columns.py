"""batch report and webhook columns

Revision ID: 0002_batches
Revises: 0001
Create Date: 2026-11-29 11:29:20.053189
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = '0002_batches'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('batches', schema=None) as batch_op:
        batch_op.add_column(sa.Column('report', sa.LargeBinary().with_variant(mysql.LONGBLOB(), 'mariadb').with_variant(mysql.LONGBLOB(), 'mysql'), nullable=True))
        batch_op.add_column(sa.Column('webhook_status', sa.String(length=16), nullable=True))
        # A server default so that existing rows get 0 on MariaDB and on SQLite's table copy.
        batch_op.add_column(sa.Column('webhook_attempts', sa.Integer(), nullable=False,
                                      server_default='0'))
        batch_op.create_unique_constraint('uq_batches_tenant_idempotency', ['tenant_id', 'idempotency_key'])


def downgrade() -> None:
    with op.batch_alter_table('batches', schema=None) as batch_op:
        batch_op.drop_constraint('uq_batches_tenant_idempotency', type_='unique')
        batch_op.drop_column('webhook_attempts')
        batch_op.drop_column('webhook_status')
        batch_op.drop_column('report')
