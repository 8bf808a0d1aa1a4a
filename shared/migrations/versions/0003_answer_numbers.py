"""jobs.numbers: the faithfulness check of each answer's figures

Revision ID: 0003_answer_numbers
Revises: 0002_batches
Create Date: 2026-11-30 05:00:00
"""
import sqlalchemy as sa
from alembic import op

revision = '0003_answer_numbers'
down_revision = '0002_batches'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Nullable: answers written before the check existed have none.
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('numbers', sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.drop_column('numbers')
