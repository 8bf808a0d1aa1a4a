"""Row policies and column masks on datasets

A dataset may carry row policies (``[{table, filter, groups?, exempt_admins?}]``) and
column masks (``[{table, column, mask, groups?, exempt_admins?}]``); every query a job
runs for a user they bind is rewritten under them (``engine/policies``). Null: none.

Revision ID: 0013_row_policies
Revises: 0011_live_datasets_and_refresh
Create Date: 2026-12-03 08:00:00
"""
import sqlalchemy as sa
from alembic import op

revision = '0013_row_policies'
down_revision = '0012_people'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('datasets', schema=None) as batch_op:
        batch_op.add_column(sa.Column('policies', sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column('masks', sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('datasets', schema=None) as batch_op:
        batch_op.drop_column('masks')
        batch_op.drop_column('policies')
