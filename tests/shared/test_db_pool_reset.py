"""A connection going back to the pool is rolled back when, and only when, a transaction
is still open on it (real MariaDB: its session counters say what was sent)."""
from __future__ import annotations

import pytest
from sqlalchemy import text

from tests.utils.probe_table import engine_with_probe_table


@pytest.fixture
def engine(settings):
    # One connection: the session counters are those of the connection under test.
    with engine_with_probe_table(settings.database_url, "id INT PRIMARY KEY",
                                 pool_size=1) as engine:
        yield engine


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
