"""The SQL process's one watchdog thread: interrupts at the budget, reports it, and never
lets an interrupt meant for one query reach the next (disarm and fire racing)."""
from __future__ import annotations

import random
import threading
import time

import duckdb
import pytest

from engine.sql.watchdog import REINTERRUPT_S, QueryWatchdog

RUNAWAY = "SELECT count(*) FROM range(100000000) a, range(100000000) b"


class CountingCursor:
    """A real DuckDB cursor that counts the interrupts it receives."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.cursor = con.cursor()
        self.interrupts = 0

    def interrupt(self) -> None:
        self.interrupts += 1
        self.cursor.interrupt()


@pytest.fixture
def watchdog():
    dog = QueryWatchdog()
    yield dog
    dog.close()


def test_a_runaway_query_is_interrupted_at_its_budget_and_fired_says_so(watchdog):
    con = duckdb.connect()
    cursor = CountingCursor(con)
    watchdog.arm(cursor, 0.2)
    started = time.monotonic()
    with pytest.raises(duckdb.InterruptException):
        cursor.cursor.execute(RUNAWAY).fetchall()
    watchdog.disarm()
    assert 0.15 < time.monotonic() - started < 5
    assert watchdog.fired and cursor.interrupts >= 1
    with pytest.raises(duckdb.InterruptException):
        watchdog.check()


def test_an_armed_query_past_its_budget_is_interrupted_again_until_disarmed(watchdog):
    # DuckDB clears the interrupt flag when a statement starts: one interrupt landing
    # between two statements of the same query must not be the last.
    cursor = CountingCursor(duckdb.connect())
    watchdog.arm(cursor, 0.0)
    time.sleep(REINTERRUPT_S * 3.5)
    watchdog.disarm()
    seen = cursor.interrupts
    assert seen >= 3
    time.sleep(REINTERRUPT_S * 2)
    assert cursor.interrupts == seen, "interrupted after disarm"


def test_disarm_racing_the_deadline_never_reaches_the_next_query(watchdog):
    con = duckdb.connect()
    rng = random.Random(18)
    earlier: list[CountingCursor] = []
    for _ in range(300):
        first = CountingCursor(con)
        watchdog.arm(first, rng.uniform(0, 0.002))  # fires around the disarm below
        time.sleep(rng.uniform(0, 0.002))
        watchdog.disarm()
        earlier.append(first)
        counts = [cursor.interrupts for cursor in earlier]
        following = CountingCursor(con)
        watchdog.arm(following, 10.0)
        assert not watchdog.fired, "the next query starts with fired set"
        assert following.cursor.execute("SELECT 42").fetchall() == [(42,)]
        watchdog.disarm()
        assert following.interrupts == 0
        assert [cursor.interrupts for cursor in earlier] == counts, "interrupted after disarm"
    assert any(cursor.interrupts for cursor in earlier), "the race was never run"


def test_the_executor_uses_one_thread_and_queries_after_a_timeout_succeed(executor):
    threads = threading.active_count()
    assert executor.run(RUNAWAY, budget_s=0.2).error.startswith("query exceeded the 0.2 s limit")
    rng = random.Random(7)
    for _ in range(100):
        short = executor.run("SELECT count(*) FROM sales", budget_s=rng.uniform(0, 0.001))
        assert short.is_error or short.rows == [(40,)]
        result = executor.run("SELECT region, count(*) FROM sales GROUP BY region "
                              "ORDER BY region", budget_s=10)
        assert not result.is_error, result.error
        assert result.rows == [("east", 10), ("north", 10), ("south", 10), ("west", 10)]
    assert threading.active_count() == threads


def test_close_ends_the_thread():
    dog = QueryWatchdog()
    dog.arm(CountingCursor(duckdb.connect()), 30)
    dog.close()
    assert not dog._thread.is_alive()
