"""A connection going back to the pool is rolled back when, and only when, a transaction
is still open on it (real MariaDB: its session counters say what was sent)."""
from __future__ import annotations

import uuid

import pytest
from sqlalchemy import text

from shared.db import make_engine


@pytest.fixture
def engine(settings):
    engine = make_engine(settings.database_url, pool_size=1)  # one connection: one session
    table = f"reset_probe_{uuid.uuid4().hex[:8]}"
    with engine.begin() as conn:
        conn.execute(text(f"CREATE TABLE {table} (id INT PRIMARY KEY)"))
    engine.probe_table = table
    yield engine
    with engine.begin() as conn:
        conn.execute(text(f"DROP TABLE {table}"))
    engine.dispose()


def _rollbacks(engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(text("SHOW SESSION STATUS LIKE 'Com_rollback'")).one()[1])


def test_a_committed_transaction_costs_no_rollback_on_return(engine):
    before = _rollbacks(engine)  # its own read is rolled back by the Connection: one
    for row in range(5):
        with engine.begin() as conn:
            conn.execute(text(f"INSERT INTO {engine.probe_table} VALUES ({row})"))
    assert _rollbacks(engine) - before == 1, "only the counting read's own rollback"


def test_a_transaction_left_open_is_rolled_back_on_return(engine):
    raw = engine.raw_connection()  # no Connection to roll it back: the pool must
    cursor = raw.cursor()
    cursor.execute(f"INSERT INTO {engine.probe_table} VALUES (42)")
    cursor.close()
    raw.close()
    with engine.connect() as conn:
        assert conn.execute(text(f"SELECT count(*) FROM {engine.probe_table}")).scalar() == 0
