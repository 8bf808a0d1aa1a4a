"""Idempotency-Key on POST /v1/datasets

A retried upload (a dropped connection, a client that retries on timeout) made a
second dataset. The key is stored on the dataset with a hash of the request, under a
unique index per tenant, as for jobs and batches; compared byte for byte (0005).

Revision ID: 0008_dataset_idempotency
Revises: 0007_datasets
Create Date: 2026-11-30 12:00:00
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = '0008_dataset_idempotency'
down_revision = '0007_datasets'
branch_labels = None
depends_on = None


def _token(length: int) -> sa.String:
    return sa.String(length).with_variant(
        mysql.VARCHAR(length, charset="utf8mb4", collation="utf8mb4_nopad_bin"), "mysql",
        "mariadb")


def upgrade() -> None:
    with op.batch_alter_table('datasets', schema=None) as batch_op:
        batch_op.add_column(sa.Column('idempotency_key', _token(200), nullable=True))
        batch_op.add_column(sa.Column('request_hash', _token(64), nullable=True))
        batch_op.create_unique_constraint('uq_datasets_tenant_idempotency',
                                          ['tenant_id', 'idempotency_key'])


def downgrade() -> None:
    with op.batch_alter_table('datasets', schema=None) as batch_op:
        batch_op.drop_constraint('uq_datasets_tenant_idempotency', type_='unique')
        batch_op.drop_column('request_hash')
        batch_op.drop_column('idempotency_key')
