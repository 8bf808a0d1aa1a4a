"""Feedback and verified queries

People rate answers (``job_feedback``: one row per job and user, a tenant key's rating
has no user) and admins keep corrected queries per dataset (``verified_queries``, with
the question's embedding so a worker never re-embeds them). A job records the verified
query its answer relied on and a clarifying question it asked instead of guessing.

Revision ID: 0015_feedback_verified_queries
Revises: 0011_live_datasets_and_refresh
Create Date: 2026-12-03 08:00:00
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = '0015_feedback_verified_queries'
down_revision = '0014_schedules'
branch_labels = None
depends_on = None

UtcDateTime = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")
Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
LongText = sa.Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")


def upgrade() -> None:
    op.create_table(
        'job_feedback',
        sa.Column('id', Id, primary_key=True, autoincrement=True),
        sa.Column('tenant_id', Id, sa.ForeignKey('tenants.id', ondelete='CASCADE'),
                  nullable=False),
        # No foreign key: jobs.id's collation differs by database; the tenant's cascade
        # removes the rows with their jobs.
        sa.Column('job_id', sa.String(length=36), nullable=False),
        sa.Column('dataset_id', sa.String(length=36), nullable=True),
        sa.Column('user_id', sa.Integer(), nullable=True),
        # user_id is NULL for a tenant key; a unique key over a NULL column allows many
        # rows, so (job_id, user_key) carries the "one per user and job" rule.
        sa.Column('user_key', sa.String(length=40), nullable=False),
        sa.Column('rating', sa.String(length=8), nullable=False),
        sa.Column('comment', sa.Text(), nullable=True),
        sa.Column('created_at', UtcDateTime, nullable=False),
        sa.Column('updated_at', UtcDateTime, nullable=False),
        sa.UniqueConstraint('job_id', 'user_key', name='uq_job_feedback_job_user'),
    )
    op.create_index('ix_job_feedback_dataset', 'job_feedback',
                    ['tenant_id', 'dataset_id', 'rating', 'updated_at'])
    op.create_table(
        'verified_queries',
        sa.Column('id', sa.String(length=36), primary_key=True),
        sa.Column('tenant_id', Id, sa.ForeignKey('tenants.id', ondelete='CASCADE'),
                  nullable=False),
        sa.Column('dataset_id', sa.String(length=36),
                  sa.ForeignKey('datasets.id', ondelete='CASCADE'), nullable=False),
        sa.Column('question', sa.Text(), nullable=False),
        sa.Column('sql', LongText, nullable=False),
        sa.Column('embedding', sa.LargeBinary(), nullable=True),
        sa.Column('from_job_id', sa.String(length=36), nullable=True),
        sa.Column('created_by', sa.String(length=200), nullable=False),
        sa.Column('created_at', UtcDateTime, nullable=False),
    )
    op.create_index('ix_verified_queries_dataset', 'verified_queries',
                    ['dataset_id', 'created_at'])
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('verified', sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column('clarification', sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.drop_column('clarification')
        batch_op.drop_column('verified')
    # Dropping a table drops its indexes; dropping the index first fails on
    # MariaDB, where it backs the dataset foreign key (error 1553).
    op.drop_table('verified_queries')
    op.drop_table('job_feedback')
