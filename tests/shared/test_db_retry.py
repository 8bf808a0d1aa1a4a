"""Which database errors are retried, judged on real MariaDB errors: a real deadlock, a
real lock wait timeout, a really killed connection, a server with no connection left
and a value the column refuses."""
from __future__ import annotations

import os
import threading
import time

import pymysql
import pytest
from sqlalchemy import make_url, text
from sqlalchemy.exc import DBAPIError, OperationalError

from shared.db_retry import (
    is_connection_lost,
    is_lock_conflict,
    is_server_full,
    is_transient,
    is_unavailable,
    retry_transient,
)
from tests.utils.probe_table import engine_with_probe_table


@pytest.fixture
def engine(settings):
    with engine_with_probe_table(settings.database_url, "id INT PRIMARY KEY, v VARCHAR(8)",
                                 rows="(1, 'a'), (2, 'b')") as engine:
        yield engine


def _update(conn, table: str, row: int) -> None:
    conn.execute(text(f"UPDATE {table} SET v = 'x' WHERE id = {row}"))


def test_a_real_deadlock_is_a_lock_conflict(engine):
    table = engine.probe_table
    errors: list[BaseException] = []
    with engine.connect() as a, engine.connect() as b:
        a.begin()
        b.begin()
        _update(a, table, 1)
        _update(b, table, 2)

        def a_wants_2():
            try:
                _update(a, table, 2)
            except DBAPIError as exc:
                errors.append(exc)

        waiting = threading.Thread(target=a_wants_2)
        waiting.start()
        time.sleep(0.5)  # a now waits for b's row lock
        try:
            _update(b, table, 1)  # the cycle: one of the two is chosen as the victim
        except DBAPIError as exc:
            errors.append(exc)
        waiting.join(30)
        a.rollback()
        b.rollback()
    (victim,) = errors
    assert victim.orig.args[0] == 1213
    assert is_lock_conflict(victim) and is_transient(victim) and not is_connection_lost(victim)


def test_a_real_lock_wait_timeout_is_a_lock_conflict(engine):
    table = engine.probe_table
    with engine.connect() as holder, engine.connect() as waiter:
        holder.begin()
        _update(holder, table, 1)
        waiter.execute(text("SET SESSION innodb_lock_wait_timeout = 1"))
        with pytest.raises(DBAPIError) as info:
            _update(waiter, table, 1)
        holder.rollback()
    assert info.value.orig.args[0] == 1205
    assert is_lock_conflict(info.value) and is_transient(info.value)


def test_a_killed_connection_is_a_lost_connection(engine):
    with engine.connect() as victim, engine.connect() as killer:
        victim_id = victim.scalar(text("SELECT CONNECTION_ID()"))
        killer.execute(text(f"KILL CONNECTION {victim_id}"))
        with pytest.raises(DBAPIError) as info:
            victim.execute(text("SELECT 1"))
    assert is_connection_lost(info.value) and is_transient(info.value)
    assert not is_lock_conflict(info.value)


def test_a_value_the_column_refuses_is_not_worth_retrying(engine):
    with engine.connect() as conn, pytest.raises(DBAPIError) as info:
        conn.execute(text(f"UPDATE {engine.probe_table} SET v = :v WHERE id = 1"),
                     {"v": "x" * 100})
    assert info.value.orig.args[0] == 1406
    assert not is_transient(info.value)


def test_the_app_waits_for_a_row_lock_no_longer_than_its_bound(settings):
    from shared.db import LOCK_WAIT_TIMEOUT_S, engine_for

    with engine_for(settings.database_url).connect() as conn:
        assert conn.scalar(text("SELECT @@innodb_lock_wait_timeout")) == LOCK_WAIT_TIMEOUT_S
    assert LOCK_WAIT_TIMEOUT_S < 40, "shorter than the bundled client's request timeout"


def test_a_server_with_no_connection_left_is_unavailable_and_worth_retrying(settings):
    """An account at its MAX_USER_CONNECTIONS gets 1226, as everyone gets 1040 at the
    server's max_connections: no connection was made, so trying again is safe."""
    from shared.db import make_engine

    user = f"sunrise_full_{os.getpid()}"
    admin = make_engine(settings.database_url)
    with admin.begin() as conn:
        conn.execute(text(f"CREATE USER IF NOT EXISTS '{user}'@'%' WITH MAX_USER_CONNECTIONS 1"))
        conn.execute(text(f"CREATE USER IF NOT EXISTS '{user}'@'localhost' "
                          "WITH MAX_USER_CONNECTIONS 1"))
    url = make_url(settings.database_url).set(username=user, password=None, database="")
    url = url.render_as_string(hide_password=False)
    first, second = make_engine(url), make_engine(url)
    try:
        with first.connect(), pytest.raises(DBAPIError) as info:
            second.connect()
        assert info.value.orig.args[0] == 1226
        assert is_server_full(info.value) and is_unavailable(info.value)
        assert is_transient(info.value) and not is_connection_lost(info.value)
    finally:
        first.dispose()
        second.dispose()
        with admin.begin() as conn:
            conn.execute(text(f"DROP USER IF EXISTS '{user}'@'%', '{user}'@'localhost'"))
        admin.dispose()


def _lost_connection() -> DBAPIError:
    return OperationalError("COMMIT", None, pymysql.err.OperationalError(2013, "Lost connection"))


def test_a_transient_failure_is_retried_on_the_backoff_schedule_until_it_passes(monkeypatch):
    """The first try is a plain call; the waits after failures are 0.2 s doubling up to
    the bound, as one tenacity policy for the whole call made them."""
    waits: list[float] = []
    monkeypatch.setattr(time, "sleep", waits.append)
    calls = []

    @retry_transient(give_up_after_s=120, max_wait_s=1)
    def write(value):
        calls.append(value)
        if len(calls) <= 5:
            raise _lost_connection()
        return value

    assert write("x") == "x" and calls == ["x"] * 6
    assert waits == [0.2, 0.4, 0.8, 1, 1]


def test_a_write_is_given_up_after_its_time_and_other_errors_are_raised_at_once(monkeypatch):
    clock = [0.0]
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(time, "sleep", lambda s: clock.__setitem__(0, clock[0] + s))
    calls = []

    @retry_transient(give_up_after_s=3, max_wait_s=5)
    def write(exc):
        calls.append(clock[0])
        raise exc

    with pytest.raises(DBAPIError):
        write(_lost_connection())
    assert calls == pytest.approx([0, 0.2, 0.6, 1.4, 3.0])  # the try at 3 s is the last
    calls.clear()
    with pytest.raises(ValueError):
        write(ValueError("not transient"))
    assert calls == [clock[0]]
