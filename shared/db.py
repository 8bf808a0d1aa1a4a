"""Engine and session factories. Nothing connects at import time."""
from __future__ import annotations

import contextlib
import functools
import threading
import time
from collections.abc import Iterator

from pymysql.constants.SERVER_STATUS import SERVER_STATUS_IN_TRANS
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.exc import InvalidatePoolError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import PoolProxiedConnection

# A row lock is waited for this long (MariaDB's default is 50 s), then the statement
# fails with 1205 and the unit of work is retried (shared/db_retry.py): no request
# hangs past a client's timeout behind one lock.
LOCK_WAIT_TIMEOUT_S = 10


def make_engine(database_url: str, *, pool_size: int = 30, max_overflow: int = 0) -> Engine:
    """A pooled engine for ``database_url``; MariaDB gets utf8mb4 and liveness checks.

    At most 30 connections per process, and all of them are kept: with overflow
    connections a worker's many threads opened and closed one per short transaction,
    each a handshake and an SSL context. A thread past 30 waits for a free one.
    """
    if database_url.startswith("sqlite"):
        engine = create_engine(
            database_url, connect_args={"check_same_thread": False, "timeout": 30}
        )
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    if database_url.startswith("mysql") and "charset=" not in database_url:
        database_url += ("&" if "?" in database_url else "?") + "charset=utf8mb4"
    engine = create_engine(
        database_url,
        pool_size=pool_size,
        max_overflow=max_overflow,
        pool_pre_ping=False,  # _ping_before_use instead
        pool_recycle=1800,
        isolation_level="READ COMMITTED",
        pool_reset_on_return=None,  # _reset_open_transaction instead
        connect_args={"init_command": f"SET SESSION innodb_lock_wait_timeout = "
                                      f"{LOCK_WAIT_TIMEOUT_S}"},
    )
    event.listen(engine, "reset", _reset_open_transaction)
    event.listen(engine, "checkin", _note_idle_since)
    event.listen(engine, "checkout", functools.partial(_ping_before_use, engine.dialect))
    return engine


# How long a connection may have been back in the pool and still be handed out without
# a ping, for the checkout in progress on this thread (see ``checkout``).
_unpinged = threading.local()


def checkout(engine: Engine, *, ping_after_idle_s: float = 0.0) -> PoolProxiedConnection:
    """``engine.raw_connection()``, whose connection is pinged first only if it was idle
    in the pool for ``ping_after_idle_s`` seconds or more (0: always, as every other
    checkout is).

    For callers that retry a lost connection themselves (the worker's job writes,
    ``worker/jobs/store.py``): a ping is a round trip on every checkout, four per job. Unpinged, a connection the server closed within that time fails its
    first statement instead, which invalidates the whole pool (``shared/driver_sql.py``),
    and the caller's retry gets a fresh one.
    """
    _unpinged.within_s = ping_after_idle_s
    try:
        return engine.raw_connection()
    finally:
        _unpinged.within_s = 0.0


def _note_idle_since(_dbapi_conn, record) -> None:
    record.info["idle_since"] = time.monotonic()


def _ping_before_use(dialect, dbapi_conn, record, _proxy) -> None:
    """What ``pool_pre_ping`` does -- a dead connection is replaced, and every other one
    opened before it with it (a server that restarted closed them all) -- unless this
    thread's ``checkout`` allows the connection's idle time. A connection just opened
    (nothing noted: the record's ``info`` goes with its connection) is not pinged."""
    idle_since = record.info.get("idle_since")
    if idle_since is None or time.monotonic() - idle_since < getattr(_unpinged, "within_s", 0.0):
        return
    try:
        dialect.do_ping(dbapi_conn)
    except dialect.loaded_dbapi.Error as exc:
        if dialect.is_disconnect(exc, dbapi_conn, None):
            raise InvalidatePoolError(f"ping failed: {exc}") from exc
        raise


def _reset_open_transaction(dbapi_conn, _record, reset_state) -> None:
    """A connection going back to the pool is rolled back only if a transaction is open.

    The pool's default rolls back every connection it takes back, but a ``Connection``
    already rolls back a transaction it leaves open, so after a commit that was one
    more round trip per transaction for nothing (six per job in the worker). PyMySQL
    knows from the server's last reply whether a transaction is open; another driver's
    connection is rolled back by the pool as usual.
    """
    if reset_state.terminate_only or reset_state.transaction_was_reset:
        return
    status = getattr(dbapi_conn, "server_status", None)
    if isinstance(status, int) and not status & SERVER_STATUS_IN_TRANS:
        return
    dbapi_conn.rollback()


def _sqlite_pragmas(dbapi_conn, _record) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()


@functools.cache
def engine_for(database_url: str) -> Engine:
    """One engine per URL per process, created on first use."""
    return make_engine(database_url)


@functools.cache
def session_factory(database_url: str) -> sessionmaker[Session]:
    return sessionmaker(engine_for(database_url), expire_on_commit=False)


@contextlib.contextmanager
def session_scope(database_url: str) -> Iterator[Session]:
    """A session that commits on success, rolls back on error and always closes."""
    session = session_factory(database_url)()
    try:
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()
