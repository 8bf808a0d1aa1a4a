"""tool_calls name their tool; jobs name the dataset (and version) they ask about

Revision ID: 0006_tools_and_datasets
Revises: 0005_exact_tokens
Create Date: 2026-11-30 12:00:00
"""
import sqlalchemy as sa
from alembic import op

revision = '0006_tools_and_datasets'
down_revision = '0005_exact_tokens'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Server defaults and nullable columns only: pods of the previous release keep
    # writing rows without them while a rollout runs.
    with op.batch_alter_table('tool_calls', schema=None) as batch_op:
        batch_op.add_column(sa.Column('tool', sa.String(length=64), nullable=False,
                                      server_default='execute_sql'))
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('dataset_id', sa.String(length=36), nullable=True))
        batch_op.add_column(sa.Column('dataset_version', sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.drop_column('dataset_version')
        batch_op.drop_column('dataset_id')
    with op.batch_alter_table('tool_calls', schema=None) as batch_op:
        batch_op.drop_column('tool')
