"""An index for a tenant's jobs in flight

Every submit counts the tenant's interactive jobs in flight (the concurrency cap,
``api/services/jobs.py``). With only ``(tenant_id, created_at)`` and ``(status,
heartbeat_at)`` to choose from, MariaDB read either the tenant's whole history or every
tenant's jobs in flight, and each row besides the index entry. ``(tenant_id, status,
batch_id)`` answers the count from the index alone, reading only that tenant's jobs in
flight: 181-611 -> 70-73 us per count with 80 in flight per tenant.

Revision ID: 0009_jobs_tenant_status
Revises: 0008_dataset_idempotency
Create Date: 2026-12-01 13:00:00
"""
from alembic import op

revision = '0009_jobs_tenant_status'
down_revision = '0008_dataset_idempotency'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.create_index('ix_jobs_tenant_status', ['tenant_id', 'status', 'batch_id'],
                              unique=False)


def downgrade() -> None:
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.drop_index('ix_jobs_tenant_status')
