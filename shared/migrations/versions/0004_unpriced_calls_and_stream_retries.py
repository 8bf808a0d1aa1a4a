"""cost_usd may be null (a model without a known price); jobs count mid-stream retries

Revision ID: 0004_unpriced_and_retries
Revises: 0003_answer_numbers
Create Date: 2026-11-30 09:00:00
"""
import sqlalchemy as sa
from alembic import op

revision = '0004_unpriced_and_retries'
down_revision = '0003_answer_numbers'
branch_labels = None
depends_on = None

MONEY = sa.Numeric(precision=16, scale=8)


def upgrade() -> None:
    for table in ('jobs', 'llm_calls'):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.alter_column('cost_usd', existing_type=MONEY, nullable=True)
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        # A server default so that existing rows get 0 on MariaDB and on SQLite's table copy.
        batch_op.add_column(sa.Column('llm_retries', sa.Integer(), nullable=False,
                                      server_default='0'))


def downgrade() -> None:
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.drop_column('llm_retries')
    for table in ('jobs', 'llm_calls'):
        op.execute(sa.text(f"UPDATE {table} SET cost_usd = 0 WHERE cost_usd IS NULL"))
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.alter_column('cost_usd', existing_type=MONEY, nullable=False)
