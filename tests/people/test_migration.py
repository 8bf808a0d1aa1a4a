"""Migration 0012 keeps today's keys working unchanged: a key made before scopes existed
has every scope afterwards and acts for its tenant as an owner (issue 35)."""
from __future__ import annotations

import os

import sqlalchemy as sa
from alembic import command

from bench.scratch_mariadb import create_database, drop_database
from shared.keys import KEY_PREFIX, grant_for_key, hash_key
from shared.migrate import alembic_config
from shared.principal import SCOPES

BEFORE = "0011_live_datasets_and_refresh"


def _old_key(url: str) -> str:
    key = KEY_PREFIX + "made-before-people-" + os.urandom(4).hex()
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text("INSERT INTO tenants (name, created_at) VALUES ('old', "
                             "CURRENT_TIMESTAMP)"))
        conn.execute(sa.text(
            "INSERT INTO api_keys (tenant_id, key_hash, prefix, created_at) SELECT id, :h, "
            ":p, CURRENT_TIMESTAMP FROM tenants WHERE name = 'old'"),
            {"h": hash_key(key), "p": key[:16]})
    engine.dispose()
    return key


def _check_upgrade(url: str) -> None:
    command.upgrade(alembic_config(url), BEFORE)
    key = _old_key(url)
    command.upgrade(alembic_config(url), "head")
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            grant = grant_for_key(conn, key)
            stored = conn.scalar(sa.text("SELECT scopes FROM api_keys"))
        assert grant is not None and grant.scopes == SCOPES and grant.user_id is None
        assert stored is not None and "act_as" in stored  # written, not just defaulted
    finally:
        engine.dispose()
    # And back down, then up again: the migration is reversible.
    command.downgrade(alembic_config(url), BEFORE)
    command.upgrade(alembic_config(url), "head")


def test_keys_made_before_people_keep_every_scope_on_mariadb(database_url):
    name = f"people_migration_{os.getpid()}"
    url = create_database(name, migrate=False)
    try:
        _check_upgrade(url)
    finally:
        drop_database(name)


def test_keys_made_before_people_keep_every_scope_on_sqlite(tmp_path):
    _check_upgrade(f"sqlite:///{tmp_path / 'old.db'}")
