"""Report schedules and their runs

A schedule asks its questions as a batch on a cron in a time zone and delivers the
report by email, Slack and signed webhooks. The beat's tick finds due schedules through
``ix_schedules_next_run`` and claims each slot once by inserting its run: the unique
key (schedule, slot) makes a second claim of the same slot fail (no expiring lock).

Revision ID: 0014_schedules
Revises: 0011_live_datasets_and_refresh
Create Date: 2026-12-03 08:00:00
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = '0014_schedules'
down_revision = '0013_row_policies'
branch_labels = None
depends_on = None

Id = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')
UtcDateTime = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")


def upgrade() -> None:
    op.create_table(
        'schedules',
        sa.Column('id', sa.String(length=36), primary_key=True),
        sa.Column('tenant_id', Id, sa.ForeignKey('tenants.id', ondelete='CASCADE'),
                  nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=True),
        sa.Column('name', sa.String(length=200), nullable=False),
        sa.Column('spec', sa.JSON(), nullable=False),
        sa.Column('cron', sa.String(length=100), nullable=False),
        sa.Column('timezone', sa.String(length=64), nullable=False),
        sa.Column('paused', sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column('secret', sa.String(length=64), nullable=False),
        sa.Column('next_run_at', UtcDateTime, nullable=True),
        sa.Column('created_at', UtcDateTime, nullable=False),
        sa.Column('updated_at', UtcDateTime, nullable=False),
        sa.Index('ix_schedules_next_run', 'next_run_at'),
        sa.Index('ix_schedules_tenant_created', 'tenant_id', 'created_at'),
    )
    op.create_table(
        'schedule_runs',
        sa.Column('id', sa.String(length=36), primary_key=True),
        sa.Column('schedule_id', sa.String(length=36),
                  sa.ForeignKey('schedules.id', ondelete='CASCADE'), nullable=False),
        sa.Column('tenant_id', Id, nullable=False),
        sa.Column('slot', UtcDateTime, nullable=False),
        sa.Column('manual', sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column('status', sa.String(length=24), nullable=False),
        sa.Column('reason', sa.String(length=500), nullable=True),
        sa.Column('batch_id', sa.String(length=36), nullable=True),
        sa.Column('condition_value', sa.Float(), nullable=True),
        sa.Column('deliveries', sa.JSON(), nullable=True),
        sa.Column('created_at', UtcDateTime, nullable=False),
        sa.Column('finished_at', UtcDateTime, nullable=True),
        sa.Column('delivery_claimed_at', UtcDateTime, nullable=True),
        sa.UniqueConstraint('schedule_id', 'slot', name='uq_schedule_runs_slot'),
        sa.Index('ix_schedule_runs_batch', 'batch_id'),
        sa.Index('ix_schedule_runs_status', 'status', 'created_at'),
    )


def downgrade() -> None:
    op.drop_table('schedule_runs')
    op.drop_table('schedules')
