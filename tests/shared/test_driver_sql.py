"""Prebuilt statements on the DBAPI cursor (shared/driver_sql.py), on real MariaDB: the
rows they write are the rows Core writes, and their errors are the errors a
``Connection`` raises, so the retry policies treat them alike."""
from __future__ import annotations

import time
from collections.abc import Iterator

import pymysql
import pytest
from sqlalchemy import func, insert, select, text
from sqlalchemy.exc import DBAPIError

from shared.db import engine_for, make_engine
from shared.db_retry import is_connection_lost, is_transient
from shared.driver_sql import DriverSQL
from shared.models import Message, ToolCall
from tests.conftest import MARIADB
from tests.utils.jobs import create_job

messages, tool_calls = Message.__table__, ToolCall.__table__
_INSERT_MESSAGE, _INSERT_TOOL_CALL = insert(messages), insert(tool_calls)
_CONNECTION_ID = select(func.connection_id())


@pytest.fixture
def driver(settings) -> DriverSQL:
    return DriverSQL(engine_for(settings.database_url))


def _stored(engine, table, job_id: str) -> list[dict]:
    """The rows of ``job_id`` as Core reads them, without their id and timestamp."""
    with engine.connect() as conn:
        rows = conn.execute(select(table).where(table.c.job_id == job_id).order_by(table.c.id))
        return [{k: v for k, v in row._mapping.items() if k not in ("id", "created_at")}
                for row in rows]


def test_the_rows_written_are_those_core_writes(settings, driver):
    """JSON (a list, and None stored as JSON null), booleans, defaults (created_at,
    computed per row of a multi-row INSERT) and text go through the column types."""
    by_driver, conversation_id = create_job(settings, "Which way?")
    by_core, _ = create_job(settings, "Which way?", conversation_id=conversation_id)

    def rows(job_id):
        return ([{"conversation_id": conversation_id, "job_id": job_id, "role": role,
                  "text": "Ünïcode ✓", "charts": charts}
                 for role, charts in (("assistant", [{"type": "bar"}]), ("other", None))],
                [{"job_id": job_id, "attempt": 1, "round": n, "tool": "execute_sql",
                  "query_id": None, "sql": "SELECT 1", "rows": 1, "cached": n == 1,
                  "is_error": False, "error": None, "ms": 3} for n in (1, 2)])

    message_rows, tool_rows = rows(by_driver)
    with driver.begin() as conn:
        for row in message_rows:
            conn.execute(_INSERT_MESSAGE, row)
        assert conn.execute(_INSERT_TOOL_CALL, tool_rows).rowcount == 2
    message_rows, tool_rows = rows(by_core)
    with driver.engine.begin() as conn:
        for row in message_rows:
            conn.execute(_INSERT_MESSAGE, row)
        conn.execute(_INSERT_TOOL_CALL, tool_rows)

    for table in (messages, tool_calls):
        written, expected = _stored(driver.engine, table, by_driver), _stored(driver.engine, table, by_core)
        assert [{**row, "job_id": None} for row in written] == \
            [{**row, "job_id": None} for row in expected]
    with driver.begin() as conn:  # a SELECT's rows come through the result processors
        (row,) = conn.execute(select(messages.c.charts, messages.c.created_at).where(
            messages.c.job_id == by_driver, messages.c.role == "assistant")).all()
    assert row.charts == [{"type": "bar"}] and row.created_at is not None


_SET_NO_BACKSLASH_ESCAPES = text(
    "SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')")
_RESET_SQL_MODE = text("SET SESSION sql_mode = DEFAULT")
_ODD_TEXT = "Ünïcode ✓ 'quoted' \"double\" back\\slash \n\r\0\x1a 100%"


def _recording_executes(monkeypatch) -> list[tuple[str, object]]:
    """Every ``(query, args)`` PyMySQL's cursors are asked to execute from now on."""
    calls: list[tuple[str, object]] = []
    execute = pymysql.cursors.Cursor.execute

    def recording(cursor, query, args=None):
        calls.append((query, args))
        return execute(cursor, query, args)

    monkeypatch.setattr(pymysql.cursors.Cursor, "execute", recording)
    return calls


@pytest.mark.parametrize("backslash_escapes", [True, False])
def test_values_are_bound_by_the_driver_and_stored_as_given(settings, monkeypatch,
                                                            backslash_escapes):
    """The statement goes to PyMySQL with its values as parameters (its own escaping,
    also when the server wants quotes doubled), and odd text comes back as written."""
    engine = make_engine(settings.database_url, pool_size=1)
    try:
        driver = DriverSQL(engine)
        job_id, conversation_id = create_job(settings, "Odd values?")
        calls = _recording_executes(monkeypatch)
        with driver.begin() as conn:
            if not backslash_escapes:
                conn.execute(_SET_NO_BACKSLASH_ESCAPES)
            conn.execute(_INSERT_MESSAGE, {"conversation_id": conversation_id,
                                           "job_id": job_id, "role": "assistant",
                                           "text": _ODD_TEXT, "charts": [{"title": _ODD_TEXT}]})
            conn.execute(_INSERT_TOOL_CALL, {"job_id": job_id, "attempt": 1, "round": 1,
                                             "sql": _ODD_TEXT, "error": _ODD_TEXT})
        inserts = [(query, args) for query, args in calls if query.startswith("INSERT")]
        assert len(inserts) == 2 and all(isinstance(args, dict) for _, args in inserts)
        assert all(_ODD_TEXT not in query for query, _ in inserts)
        with driver.begin() as conn:
            conn.execute(_RESET_SQL_MODE)
    finally:
        engine.dispose()
    (message,) = [row for row in _stored(driver.engine, messages, job_id)
                  if row["role"] == "assistant"]
    (tool_call,) = _stored(driver.engine, tool_calls, job_id)
    assert message["text"] == _ODD_TEXT and message["charts"] == [{"title": _ODD_TEXT}]
    assert tool_call["sql"] == tool_call["error"] == _ODD_TEXT


def test_a_multi_row_insert_longer_than_one_statement_stores_every_row(settings, driver,
                                                                       monkeypatch):
    job_id, _ = create_job(settings, "Many rows?")
    rows = [{"job_id": job_id, "attempt": 1, "round": n, "sql": f"SELECT {n} -- ✓" * n}
            for n in range(1, 8)]
    monkeypatch.setattr(pymysql.cursors.Cursor, "max_stmt_length", 700)
    calls = _recording_executes(monkeypatch)
    with driver.begin() as conn:
        assert conn.execute(_INSERT_TOOL_CALL, rows).rowcount == len(rows)
    assert len(calls) > 1  # PyMySQL's executemany cut it
    assert [row["sql"] for row in _stored(driver.engine, tool_calls, job_id)] == \
        [row["sql"] for row in rows]


def test_a_refused_value_is_a_sqlalchemy_error_and_rolls_the_transaction_back(settings, driver):
    job_id, conversation_id = create_job(settings, "Too long?")
    with pytest.raises(DBAPIError) as info, driver.begin() as conn:
        conn.execute(_INSERT_MESSAGE, {"conversation_id": conversation_id, "job_id": job_id,
                                       "role": "assistant", "text": "kept?", "charts": None})
        conn.execute(_INSERT_TOOL_CALL, {"job_id": job_id, "round": 1, "sql": "x",
                                         "tool": "x" * 100})  # VARCHAR(64): 1406
    assert info.value.orig.args[0] == 1406
    assert not info.value.connection_invalidated and not is_transient(info.value)
    assert [row["role"] for row in _stored(driver.engine, messages, job_id)] == ["user"]


@pytest.fixture
def one_connection(settings) -> Iterator[DriverSQL]:
    engine = make_engine(settings.database_url, pool_size=1)
    yield DriverSQL(engine)
    engine.dispose()


def test_a_killed_connection_is_invalidated_and_the_next_transaction_gets_a_live_one(
        one_connection):
    driver = one_connection
    with driver.begin() as conn:
        killed = conn.scalar(_CONNECTION_ID)
    killer = pymysql.connect(**MARIADB, autocommit=True)
    try:
        with pytest.raises(DBAPIError) as info, driver.begin() as conn:
            assert conn.scalar(_CONNECTION_ID) == killed  # the pool's one connection
            with killer.cursor() as cursor:
                cursor.execute("KILL %s", (killed,))
            conn.scalar(_CONNECTION_ID)
    finally:
        killer.close()
    assert info.value.connection_invalidated and is_connection_lost(info.value)
    with driver.begin() as conn:
        assert conn.scalar(_CONNECTION_ID) != killed


@pytest.fixture
def two_connections(settings) -> Iterator:
    engine = make_engine(settings.database_url, pool_size=2)
    yield engine
    engine.dispose()


def _open_both(driver: DriverSQL) -> set[int]:
    """Check out the pool's two connections at once; their server-side ids."""
    with driver.begin() as first, driver.begin() as second:
        return {first.scalar(_CONNECTION_ID), second.scalar(_CONNECTION_ID)}


def _kill(connection_ids: set[int]) -> None:
    killer = pymysql.connect(**MARIADB, autocommit=True)
    try:
        with killer.cursor() as cursor:
            for connection_id in connection_ids:
                cursor.execute("KILL %s", (connection_id,))
    finally:
        killer.close()


def test_a_checkout_pings_by_default_and_a_dead_pool_is_replaced_unseen(two_connections):
    driver = DriverSQL(two_connections)
    killed = _open_both(driver)
    _kill(killed)
    with driver.begin() as conn:  # pinged: the dead one is replaced before use
        assert conn.scalar(_CONNECTION_ID) not in killed
    assert not killed & _open_both(driver), "the ping's failure replaced every connection"


def test_a_recently_used_connection_goes_unpinged_and_its_failure_replaces_the_pool(
        two_connections):
    """A caller that retries lost connections takes recent ones unpinged: the first
    statement on a dead one fails (the retry's business), and that failure invalidates
    every connection opened before it, so the retry does not meet the other dead one."""
    driver = DriverSQL(two_connections, ping_after_idle_s=60)
    killed = _open_both(driver)
    _kill(killed)
    with pytest.raises(DBAPIError) as info, driver.begin() as conn:
        conn.scalar(_CONNECTION_ID)
    assert info.value.connection_invalidated and is_connection_lost(info.value)
    assert not killed & _open_both(driver)


def test_only_the_unpinged_callers_skip_the_ping(two_connections):
    """The engine's other users (sessions, Core) still ping every connection, and the
    driver pings one idle for longer than its limit."""
    unpinged = DriverSQL(two_connections, ping_after_idle_s=60)
    _kill(_open_both(unpinged))
    with two_connections.connect() as conn:
        assert conn.scalar(_CONNECTION_ID)
    short = DriverSQL(two_connections, ping_after_idle_s=0.2)
    killed = _open_both(short)
    _kill(killed)
    time.sleep(0.3)
    with short.begin() as conn:
        assert conn.scalar(_CONNECTION_ID) not in killed


def test_an_unreachable_server_is_a_lost_connection():
    engine = make_engine("mysql+pymysql://root@127.0.0.1:1/sunrise", pool_size=1)
    try:
        with pytest.raises(DBAPIError) as info, DriverSQL(engine).begin():
            pass
        assert is_connection_lost(info.value)
    finally:
        engine.dispose()
