"""People: users, key scopes and owners, dataset access, console sessions, audit log

A tenant's users (``users``), each request acting as at most one of them. Keys gain
``scopes`` (existing keys get every scope: they keep working unchanged) and may belong to
a user. Jobs, conversations and batches record the user they belong to. ``datasets.access``
restricts who may ask a dataset (null: the whole tenant). Console sign-in keeps
server-side ``sessions`` and one-time ``sign_in_links`` (both by token hash only).
``audit_log`` is append-only: on MariaDB triggers refuse UPDATE and DELETE.

Revision ID: 0012_people
Revises: 0011_live_datasets_and_refresh
Create Date: 2026-12-03 08:00:00
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = '0012_people'
down_revision = '0011_live_datasets_and_refresh'
branch_labels = None
depends_on = None

UtcDateTime = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")
Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def ExactToken(length: int) -> sa.String:
    return sa.String(length).with_variant(
        mysql.VARCHAR(length, charset="utf8mb4", collation="utf8mb4_nopad_bin"),
        "mysql", "mariadb")


ALL_SCOPES = '["act_as", "admin", "ask", "datasets"]'
_TRIGGERS = ("audit_log_no_update", "audit_log_no_delete")


def upgrade() -> None:
    op.create_table(
        'users',
        sa.Column('id', Id, primary_key=True, autoincrement=True),
        sa.Column('tenant_id', Id, sa.ForeignKey('tenants.id', ondelete='CASCADE'),
                  nullable=False),
        sa.Column('external_id', ExactToken(200), nullable=False),
        sa.Column('email', ExactToken(320), nullable=True),
        sa.Column('role', sa.String(16), nullable=False, server_default='viewer'),
        sa.Column('groups', sa.JSON(), nullable=True),
        sa.Column('attributes', sa.JSON(), nullable=True),
        sa.Column('created_at', UtcDateTime, nullable=False),
        sa.Column('disabled', sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.UniqueConstraint('tenant_id', 'external_id', name='uq_users_tenant_external'),
        sa.UniqueConstraint('tenant_id', 'email', name='uq_users_tenant_email'),
    )
    with op.batch_alter_table('api_keys', schema=None) as batch_op:
        batch_op.add_column(sa.Column('scopes', sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column('user_id', Id, sa.ForeignKey(
            'users.id', ondelete='CASCADE', name='fk_api_keys_user'), nullable=True))
    op.execute(f"UPDATE api_keys SET scopes = '{ALL_SCOPES}'")
    for table in ('jobs', 'conversations', 'batches'):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(sa.Column('user_id', Id, nullable=True))
            batch_op.create_index(f'ix_{table}_tenant_user', ['tenant_id', 'user_id'])
    with op.batch_alter_table('datasets', schema=None) as batch_op:
        batch_op.add_column(sa.Column('access', sa.JSON(), nullable=True))
    with op.batch_alter_table('tenants', schema=None) as batch_op:
        batch_op.add_column(sa.Column('unknown_users', sa.String(16), nullable=False,
                                      server_default='create'))
    op.create_table(
        'audit_log',
        sa.Column('id', Id, primary_key=True, autoincrement=True),
        sa.Column('tenant_id', Id, nullable=False),
        sa.Column('at', UtcDateTime, nullable=False),
        sa.Column('user_id', Id, nullable=True),
        sa.Column('actor', sa.String(220), nullable=False),
        sa.Column('action', sa.String(64), nullable=False),
        sa.Column('target', sa.String(200), nullable=True),
        sa.Column('details', sa.JSON(), nullable=True),
        sa.Index('ix_audit_log_tenant_at', 'tenant_id', 'at', 'id'),
    )
    op.create_table(
        'sessions',
        sa.Column('id', Id, primary_key=True, autoincrement=True),
        sa.Column('token_hash', ExactToken(64), nullable=False, unique=True),
        sa.Column('csrf_hash', ExactToken(64), nullable=False),
        sa.Column('tenant_id', Id, sa.ForeignKey('tenants.id', ondelete='CASCADE'),
                  nullable=False),
        sa.Column('user_id', Id, sa.ForeignKey('users.id', ondelete='CASCADE'),
                  nullable=False),
        sa.Column('created_at', UtcDateTime, nullable=False),
        sa.Column('expires_at', UtcDateTime, nullable=False),
        sa.Column('ended_at', UtcDateTime, nullable=True),
    )
    op.create_table(
        'sign_in_links',
        sa.Column('id', Id, primary_key=True, autoincrement=True),
        sa.Column('token_hash', ExactToken(64), nullable=False, unique=True),
        sa.Column('tenant_id', Id, sa.ForeignKey('tenants.id', ondelete='CASCADE'),
                  nullable=False),
        sa.Column('user_id', Id, sa.ForeignKey('users.id', ondelete='CASCADE'),
                  nullable=False),
        sa.Column('created_at', UtcDateTime, nullable=False),
        sa.Column('expires_at', UtcDateTime, nullable=False),
        sa.Column('used_at', UtcDateTime, nullable=True),
    )
    if op.get_bind().dialect.name in ("mysql", "mariadb"):
        for name, event in zip(_TRIGGERS, ("UPDATE", "DELETE"), strict=True):
            op.execute(
                f"CREATE TRIGGER {name} BEFORE {event} ON audit_log FOR EACH ROW "
                "SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'audit_log is append-only'")


def downgrade() -> None:
    if op.get_bind().dialect.name in ("mysql", "mariadb"):
        for name in _TRIGGERS:
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
    op.drop_table('sign_in_links')
    op.drop_table('sessions')
    op.drop_table('audit_log')
    with op.batch_alter_table('tenants', schema=None) as batch_op:
        batch_op.drop_column('unknown_users')
    with op.batch_alter_table('datasets', schema=None) as batch_op:
        batch_op.drop_column('access')
    for table in ('batches', 'conversations', 'jobs'):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_index(f'ix_{table}_tenant_user')
            batch_op.drop_column('user_id')
    with op.batch_alter_table('api_keys', schema=None) as batch_op:
        batch_op.drop_constraint('fk_api_keys_user', type_='foreignkey')
        batch_op.drop_column('user_id')
        batch_op.drop_column('scopes')
    op.drop_table('users')
