"""Tenant cost budgets

One row per tenant that set a budget (``PATCH /v1/tenant``): a monthly and an
optional daily limit in US dollars, and what happens past either (``block`` refuses
new work with 429 ``budget_exceeded``; ``warn`` only reports). Spend itself is not
stored: it is summed from ``llm_calls`` (``shared/budgets.py``).

Revision ID: 0016_tenant_budgets
Revises: 0011_live_datasets_and_refresh
Create Date: 2026-12-03 08:00:00
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = '0016_tenant_budgets'
down_revision = '0015_feedback_verified_queries'
branch_labels = None
depends_on = None

UtcDateTime = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")
Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        'tenant_budgets',
        sa.Column('tenant_id', Id, sa.ForeignKey('tenants.id', ondelete='CASCADE'),
                  primary_key=True, autoincrement=False),
        sa.Column('monthly_usd', sa.Numeric(16, 8), nullable=True),
        sa.Column('daily_usd', sa.Numeric(16, 8), nullable=True),
        sa.Column('on_exceed', sa.String(length=8), nullable=False, server_default='block'),
        sa.Column('updated_at', UtcDateTime, nullable=False),
    )


def downgrade() -> None:
    op.drop_table('tenant_budgets')
