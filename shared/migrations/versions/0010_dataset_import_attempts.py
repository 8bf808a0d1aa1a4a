"""Import attempts on the dataset row

An import whose worker died was sent again by the reaper forever: a file that kills
every worker that reads it (a 1.5 KB .xlsx that makes the Excel reader abort) took
down worker after worker. Each claim now counts an attempt, as a job's does, and the
import ends failed after ``max_attempts`` (``shared/dataset_state.py``).

Revision ID: 0010_dataset_import_attempts
Revises: 0009_jobs_tenant_status
Create Date: 2026-12-01 22:00:00
"""
import sqlalchemy as sa
from alembic import op

revision = '0010_dataset_import_attempts'
down_revision = '0009_jobs_tenant_status'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('datasets', schema=None) as batch_op:
        batch_op.add_column(sa.Column('import_attempts', sa.Integer(), nullable=False,
                                      server_default='0'))


def downgrade() -> None:
    with op.batch_alter_table('datasets', schema=None) as batch_op:
        batch_op.drop_column('import_attempts')
