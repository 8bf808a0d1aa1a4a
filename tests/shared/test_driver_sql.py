"""Prebuilt statements on the DBAPI cursor (shared/driver_sql.py), on real MariaDB: the
rows they write are the rows Core writes, and their errors are the errors a
``Connection`` raises, so the retry policies treat them alike."""
from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterator
from decimal import Decimal

import pymysql
import pytest
from sqlalchemy import func, insert, select
from sqlalchemy.exc import DBAPIError

from shared.db import engine_for, make_engine
from shared.db_retry import is_connection_lost, is_transient
from shared.driver_sql import DriverSQL, _compiled
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


_ODD_TEXT = "Ünïcode ✓ 'quoted' \"double\" back\\slash \n\r\0\x1a 100%"
_VALUES = [None, True, False, 0, -7, 2**40, 1.5, Decimal("0.01234"), Decimal("1E-8"), _ODD_TEXT,
           "", b"bytes", dt.datetime(2026, 12, 1, 10, 41, 19, 7), dt.datetime(2026, 1, 2, 3, 4, 5),
           dt.datetime(999, 1, 1), dt.datetime(2026, 12, 1, 10, 41, tzinfo=dt.UTC),
           dt.date(2026, 12, 1), [{"type": "bar", "text": _ODD_TEXT}]]


def test_the_sql_sent_is_the_sql_pymysql_would_send(driver):
    """Values are made literals by the driver path itself: the text is PyMySQL's, for
    every type a column takes here (and the types it passes to PyMySQL's escape)."""
    with driver.begin() as conn:
        cursor, escape = conn._cursor, conn._escape
        assert escape is not None
        for value in _VALUES:
            scalar = None if isinstance(value, list) else value
            for statement, values in (
                    (_INSERT_TOOL_CALL, {"job_id": "j", "round": scalar, "sql": _ODD_TEXT,
                                         "error": scalar, "created_at": scalar}),
                    (_INSERT_MESSAGE, {"conversation_id": "c", "job_id": "j", "role": "r",
                                       "text": _ODD_TEXT, "created_at": _VALUES[12],
                                       "charts": value if isinstance(value, list) else None})):
                compiled = _compiled(statement, driver.dialect, frozenset(values))
                assert compiled.literal_sql(values, escape) == \
                    cursor.mogrify(compiled.sql, compiled.parameters(values)), value


def test_a_multi_row_insert_is_cut_where_pymysql_cuts_it(settings, driver, monkeypatch):
    job_id, _ = create_job(settings, "Many rows?")
    created = dt.datetime(2026, 12, 1, 10, 41, 19, 7)
    rows = [{"job_id": job_id, "attempt": 1, "round": n, "sql": f"SELECT {n} -- ✓" * n,
             "created_at": created} for n in range(1, 8)]
    monkeypatch.setattr(pymysql.cursors.Cursor, "max_stmt_length", 700)
    sent: list[str] = []
    execute = pymysql.cursors.Cursor.execute

    def recording(cursor, query, args=None):
        sql = cursor.mogrify(query, args)  # PyMySQL's executemany sends bytes
        sent.append(sql.decode() if isinstance(sql, (bytes, bytearray)) else sql)
        return execute(cursor, query, args)

    monkeypatch.setattr(pymysql.cursors.Cursor, "execute", recording)
    with driver.begin() as conn:
        assert conn.execute(_INSERT_TOOL_CALL, rows).rowcount == len(rows)
    by_driver, sent[:] = list(sent), []
    compiled = _compiled(_INSERT_TOOL_CALL, driver.dialect, frozenset(rows[0]))
    raw = driver.engine.raw_connection()
    try:
        with raw.dbapi_connection.cursor() as cursor:
            cursor.executemany(compiled.sql, [compiled.parameters(row) for row in rows])
        raw.rollback()
    finally:
        raw.close()
    assert len(by_driver) > 1 and by_driver == sent
    assert len(_stored(driver.engine, tool_calls, job_id)) == len(rows)


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


def test_column_descriptions_come_from_the_cache_as_pymysql_parses_them(settings, driver):
    """A statement's columns are parsed once per process (shared.db.CachingConnection):
    the description, the rows and their Python types are what plain PyMySQL gives, and
    a column of the same name but another type is another description."""
    from shared.db import CachingConnection

    job_id, _ = create_job(settings, "Described?")
    sql = ("SELECT m.id, m.role, m.text, m.created_at, m.charts, CAST(m.id AS CHAR) AS id2 "
           "FROM messages m WHERE m.job_id = %s")
    other = "SELECT m.role AS id FROM messages m WHERE m.job_id = %s"
    raw = driver.engine.raw_connection()
    try:
        assert isinstance(raw.dbapi_connection, CachingConnection)
        plain = pymysql.connect(**MARIADB, database=driver.engine.url.database,
                                charset="utf8mb4")
        try:
            for statement in (sql, sql, other):
                with raw.dbapi_connection.cursor() as cached, plain.cursor() as expected:
                    cached.execute(statement, (job_id,))
                    expected.execute(statement, (job_id,))
                    assert cached.description == expected.description
                    assert cached.fetchall() == expected.fetchall()
                    assert [type(v) for v in cached._rows[0]] == \
                        [type(v) for v in expected._rows[0]]
        finally:
            plain.close()
        raw.rollback()
    finally:
        raw.close()
