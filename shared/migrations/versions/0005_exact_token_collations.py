"""exact-token columns compare byte for byte

Idempotency keys, request hashes, API key hashes and tenant names are tokens: "kX"
and "KX" (or "k" and "k ") are different ones. MariaDB's default utf8mb4_general_ci
compares them case-insensitively and ignores trailing spaces, so two different keys
met as one. utf8mb4_nopad_bin compares the bytes, trailing spaces included.

Revision ID: 0005_exact_tokens
Revises: 0004_unpriced_and_retries
Create Date: 2026-11-30 09:00:00
"""
from alembic import op

revision = '0005_exact_tokens'
down_revision = '0004_unpriced_and_retries'
branch_labels = None
depends_on = None

# (table, column, length, nullable); none of them is part of a foreign key.
COLUMNS = [
    ("tenants", "name", 100, False),
    ("api_keys", "key_hash", 64, False),
    ("jobs", "idempotency_key", 200, True),
    ("jobs", "request_hash", 64, True),
    ("batches", "idempotency_key", 200, True),
    ("batches", "request_hash", 64, True),
]


def _modify(collation: str) -> None:
    bind = op.get_bind()
    if bind.dialect.name not in ("mysql", "mariadb"):
        return  # SQLite already compares text byte for byte
    for table, column, length, nullable in COLUMNS:
        op.execute(f"ALTER TABLE {table} MODIFY {column} VARCHAR({length}) CHARACTER SET utf8mb4 "
                   f"COLLATE {collation} {'NULL' if nullable else 'NOT NULL'}")


def upgrade() -> None:
    _modify("utf8mb4_nopad_bin")


def downgrade() -> None:
    _modify("utf8mb4_general_ci")
