"""``LiveEngine``: model-written SQL run on the source itself, bounded and cancellable.

One per live dataset per worker process, shared by its job threads. ``run`` returns what
the DuckDB sandbox returns (``engine/sql/query_result.py``) and never raises for SQL
problems. The layers, outermost first:

1. ``statement_check``: one read-only query in the engine's dialect, no refused function.
2. ``query_slots``: at most ``max_concurrent_queries`` of the dataset's queries run at
   once across the fleet; a query waits for a slot within its own time budget.
3. The engine's session (``postgres`` / ``mysql``): read-only (each statement is a
   read-only transaction of its own) with a server-side statement timeout equal to the
   query's budget rounded up to whole seconds; settings are sent only when they change,
   so a query usually costs the engine one round trip, as a bare driver's does.
4. Bounded fetching: at most ``chart_row_limit`` (+1) rows (the engine's own limit) and
   ``result_max_bytes`` of rendered text leave the engine; cells are cut as the sandbox
   cuts them (``result_rows.take_rows``).
5. A watchdog per query: past its budget (plus ``WATCHDOG_GRACE_S``) the query is
   cancelled on the engine from another connection, and a connection that still does
   not answer is shut down. ``cancel(tag)`` does the same on demand, from any thread.

Every connection is opened by ``live_connection.connect`` (the outbound policy after DNS
and on the connected socket). Messages and log lines name the source by its masked
URL; a driver message that repeats the password is withheld.
"""
from __future__ import annotations

import contextlib
import itertools
import logging
import math
import socket
import threading
import time
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import psycopg
import pymysql

from engine.datasets.importers.live_connection import socket_fileno
from engine.datasets.profile import TableProfile
from engine.live.connection_pool import ConnectionPool, peer_closed
from engine.live.query_slots import SlotsBusy
from engine.live.query_watchdog import QueryWatchdog
from engine.live.result_rows import engine_summary_sql, local_summary, take_rows
from engine.live.statement_check import StatementRefused, check_statement
from engine.sql.query_result import MAX_COLUMNS, SHOWN_ROWS, QueryResult
from engine.sql.result_sql import read_summary
from shared.errors import ImportFailed, SourceUnreachable

logger = logging.getLogger(__name__)

# How long past its budget a query may run before the watchdog cancels it on the engine
# (the engine's own timeout normally ends it first), and then before its socket is shut.
WATCHDOG_GRACE_S = 1.0
# Rows per fetch stay under about this many characters (as the sandbox's).
_FETCH_CHARS = 1_000_000
_CANCELLED_TTL_S = 300.0
_TAGS = itertools.count(1)  # names of untagged queries, unique in the process
# A cancel is repeated this often, this many times at most, while its query still runs.
_RECANCEL_S = 0.2
_CANCEL_ATTEMPTS = 25
# Driver errors meaning the connection is gone (MySQL client codes; psycopg's
# OperationalError that is not a cancel).
_MYSQL_LOST = {2006, 2013, 2055, 2003, 0}
_MYSQL_TIMEOUT = {1969, 3024}
_MYSQL_KILLED = {1317}


@dataclass
class _Running:
    """One query in flight: its engine session, and why it may be stopped."""

    tag: str
    session: int | None = None
    connection: Any = None
    stopped: str | None = None  # "cancelled" or "timeout"
    done: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)

    def check(self) -> None:
        """Raise ``_Stopped`` once the query is cancelled or past its time (before each
        statement the query sends, so a cancel landing between two is not lost)."""
        if self.stopped is not None:
            raise _Stopped(self.stopped)


@dataclass(frozen=True)
class LiveLimits:
    """What one live engine allows a query (``from_settings`` takes the SQL tool's)."""

    timeout_s: float = 10.0
    chart_row_limit: int = 5000
    result_max_bytes: int = 2_000_000
    max_concurrent_queries: int = 4
    idle_close_s: float = 60.0

    @classmethod
    def from_settings(cls, settings, **overrides: Any) -> LiveLimits:
        values = {"timeout_s": settings.sql_timeout_s,
                  "chart_row_limit": settings.chart_row_limit,
                  "result_max_bytes": settings.sql_result_max_bytes}
        return cls(**{**values, **overrides})


class LiveEngine:
    """A live PostgreSQL or MariaDB/MySQL source (see the module doc). Build it with
    ``engine.live.open_engine``. Thread-safe."""

    def __init__(self, backend: ModuleType, open_connection, display: str,
                 limits: LiveLimits, slots, password: str | None) -> None:
        self._backend = backend
        self._open_connection = open_connection
        self.display = display
        self.limits = limits
        self._slots = slots
        self._password = password
        self.title = getattr(backend, "TITLE", "The source")  # the product's, once connected
        self._pool = ConnectionPool(self._connect, max_idle=limits.max_concurrent_queries + 1,
                                    idle_close_s=limits.idle_close_s,
                                    label=display.rpartition("@")[2],
                                    is_gone=lambda conn: peer_closed(socket_fileno(conn)))
        self._watchdog = QueryWatchdog(lambda running: self._stop(running, "timeout"),
                                       display.rpartition("@")[2])
        self._running: dict[str, _Running] = {}
        self._cancelled: dict[str, float] = {}
        self._lock = threading.Lock()
        conn, _ = self._pool.acquire()  # raises SourceRefused / SourceUnreachable
        try:
            self.name = backend.name_of(conn) if hasattr(backend, "name_of") else backend.NAME
            self.title, self._number = backend.product(conn)
        finally:
            self._pool.release(conn)
        self.dialect: str = backend.DIALECT

    # -- the public face ------------------------------------------------------------

    def server_version(self) -> str:
        """The server's product and version, e.g. ``"PostgreSQL 16.4"``."""
        return f"{self.title} {self._number}"

    def engine_info(self) -> dict[str, str]:
        """``{"name", "version", "dialect"}``: the product as the prompt and the
        dataset's view name it, its version number and sqlglot's dialect, e.g.
        ``{"name": "PostgreSQL", "version": "16.4", "dialect": "postgres"}``."""
        return {"name": self.title, "version": self._number, "dialect": self.dialect}

    def run(self, sql: str, *, tag: str | None = None, timeout_s: float | None = None,
            label: str = "") -> QueryResult:
        """Check, run and summarise ``sql`` within ``timeout_s`` (default: the limits'),
        waiting for a slot included; never raises for SQL problems. ``tag`` names the
        query for ``cancel`` (default: a fresh one); ``label`` labels the log lines."""
        budget = self.limits.timeout_s if timeout_s is None else float(timeout_s)
        started = time.perf_counter()
        deadline = time.monotonic() + budget
        text = sql.strip() if isinstance(sql, str) else repr(sql)
        try:
            cleaned = check_statement(sql, self.dialect, self._backend.REFUSED, self.title)
        except StatementRefused as refused:
            logger.info("%s refused: %s", label or tag, refused.message)
            return QueryResult.failed(text, refused.message, _ms_since(started))
        return self._run_in_slot(cleaned, tag=tag or f"q{next(_TAGS)}", budget_s=budget,
                                 deadline=deadline, started=started, label=label)

    def cancel(self, tag: str) -> None:
        """Cancel the query tagged ``tag`` on the engine (``pg_cancel_backend`` / ``KILL
        QUERY``), from any thread; its ``run`` returns a failed result saying so. A tag
        not running yet is remembered for a while, so a query it starts is refused."""
        with self._lock:
            running = self._running.get(tag)
            if running is None:
                now = time.monotonic()
                self._cancelled = {t: at for t, at in self._cancelled.items()
                                   if now - at < _CANCELLED_TTL_S}
                self._cancelled[tag] = now
                return
        if self._stop_once(running, "cancelled"):
            threading.Thread(target=self._stop, args=(running, "cancelled"), daemon=True,
                             name=f"live-cancel-{tag}").start()

    def writable_privilege(self, tables: list[str] | None = None) -> str | None:
        """One privilege proving the URL's role can write in scope (superuser; INSERT,
        UPDATE, DELETE, TRUNCATE or CREATE on ``tables`` or, without them, anything in
        the database), or None for a read-only role. Raises ``SourceUnreachable``."""
        with self._session(self.limits.timeout_s, row_cap=1000) as conn:
            return self._backend.writable_privilege(conn, tables)

    def introspect(self, tables: list[str] | None = None, *,
                   sample_rows: int = 10_000) -> list[TableProfile]:
        """Schema and profile of ``tables`` (default: every table of the default schema),
        computed on the engine from at most ``sample_rows`` rows per table, each
        statement within the limits' ``timeout_s``; see ``engine/live/introspection.py``.
        Raises the ``ImportFailed`` family (``MissingTables``, ``SourceUnreachable``...)."""
        from engine.live.introspection import introspect

        return introspect(self, tables, sample_rows=sample_rows, timeout_s=self.limits.timeout_s)

    def close(self) -> None:
        """Close the pooled connections; later ``run`` calls return failed results."""
        self._watchdog.close()
        self._pool.close()

    # -- inside ---------------------------------------------------------------------

    def _run_in_slot(self, sql: str, *, tag: str, budget_s: float, deadline: float,
                     started: float, label: str) -> QueryResult:
        try:
            with self._slots.hold(deadline):
                return self._execute(sql, tag=tag, budget_s=budget_s, deadline=deadline,
                                     started=started, label=label)
        except SlotsBusy:
            message = (f"all {self.limits.max_concurrent_queries} query slots of this "
                       f"dataset stayed busy for this query's whole {budget_s:g} s; try again")
        except Exception as exc:  # Redis unreachable: the slots cannot be counted
            logger.warning("%s: the query slots could not be taken: %s", label or tag,
                           type(exc).__name__)
            message = "the dataset's query slots could not be reached; try again"
        return QueryResult.failed(sql, message, _ms_since(started), retryable=True)

    def _execute(self, sql: str, *, tag: str, budget_s: float, deadline: float | None = None,
                 started: float | None = None, label: str = "") -> QueryResult:
        """Run ``sql`` as given (no statement check: callers checked it) in the engine's
        read-only, time-limited session; bounded fetch, summary, cancel, errors."""
        started = time.perf_counter() if started is None else started
        deadline = time.monotonic() + budget_s if deadline is None else deadline
        running = _Running(tag)
        with self._lock:
            if self._cancelled.pop(tag, None) is not None:
                return QueryResult.failed(sql, "the query was cancelled", _ms_since(started))
            self._running[tag] = running
        reusable = False
        self._watchdog.arm(running, deadline + WATCHDOG_GRACE_S)
        try:
            conn = self._begin(max(0.001, deadline - time.monotonic()), running)
            result = self._fetch(conn, sql, running, started, deadline)
            self._backend.end(running.connection)
            reusable = True
        except ImportFailed as exc:  # opening a connection: refused or unreachable
            result = QueryResult.failed(sql, exc.detail, _ms_since(started),
                                        retryable=isinstance(exc, SourceUnreachable))
        except Exception as exc:
            message, reusable, lost = self._failure(exc, running, budget_s,
                                                    running.connection)
            logger.info("%s failed: %s", label or tag, message.splitlines()[0])
            result = QueryResult.failed(sql, message, _ms_since(started), retryable=lost)
        finally:
            self._watchdog.disarm(running)
            with running.lock:  # waits for a cancel in flight to land first
                running.done = True
                conn, running.connection = running.connection, None
            with self._lock:
                self._running.pop(tag, None)
            if conn is not None:
                self._pool.release(conn, reusable=reusable)
        logger.info("%s rows=%s ms=%.1f%s", label or tag, result.total_rows, result.ms,
                    " (error)" if result.is_error else "")
        return result

    def _begin(self, timeout_s: float, running: _Running, row_cap: int | None = None):
        """A pooled connection in the query's read-only session with its limits. A reused
        connection that fails here (the server restarted since) is replaced once, and
        the other idle ones are closed. (One whose peer closed it while it was idle is
        not handed out at all: ``ConnectionPool`` asks ``peer_closed`` first.)"""
        cap = row_cap or self._row_cap()
        timeout_s = session_budget(timeout_s)
        conn, reused = self._pool.acquire()
        try:
            self._backend.begin(conn, timeout_s, cap)
        except (psycopg.OperationalError, pymysql.err.OperationalError,
                pymysql.err.InterfaceError):
            self._pool.release(conn, reusable=False)
            if not reused:
                raise
            self._pool.close_idle(older_than_s=0)  # gone with it, most likely
            conn, _ = self._pool.acquire()
            try:
                self._backend.begin(conn, timeout_s, cap)
            except BaseException:
                self._pool.release(conn, reusable=False)
                raise
        with running.lock:
            running.session = self._backend.session_id(conn)
            running.connection = conn
            stopped = running.stopped
        if stopped is not None:
            with running.lock:
                running.connection = None
            self._pool.release(conn, reusable=self._still_usable(conn))
            raise _Stopped(stopped)
        return conn

    def _fetch(self, conn, sql: str, running: _Running, started: float,
               deadline: float) -> QueryResult:
        """The bounded rows of ``sql`` and, past ``SHOWN_ROWS``, the summary of the whole
        result: over the fetched rows when they are all of it, else on the engine."""
        running.check()
        rows = self._backend.Rows(conn, sql, self._row_cap())
        try:
            return self._bounded(conn, sql, rows, running, started, deadline)
        except BaseException:
            rows.discard()
            raise

    def _bounded(self, conn, sql: str, rows, running: _Running, started: float,
                 deadline: float) -> QueryResult:
        columns, types = rows.columns[:MAX_COLUMNS], rows.types
        cap = self._row_cap()
        kept: list[tuple] = []
        size, exhausted = 0, True

        def per_fetch() -> int:
            """The next batch's rows: first as if every cell were a full cell, then by
            the rows' measured size (each fetch is a round trip on PostgreSQL), always
            under ``_FETCH_CHARS`` and never past the cap."""
            row_chars = len(columns) * 1001 if not kept else max(1, size // len(kept))
            return max(1, min(cap + 1 - len(kept), _FETCH_CHARS // row_chars))

        for batch in rows.batches(per_fetch, running.check):
            size, full = take_rows(batch, kept, size, cap=cap,
                                   max_bytes=self.limits.result_max_bytes)
            if full:
                exhausted = False
                break
        if len(kept) >= cap:
            exhausted = False
        types = rows.types  # settled by the rows (MySQL: text or binary)
        summary = None
        if exhausted:
            rows.close(exhausted=True)
            total = len(kept)
            if total > SHOWN_ROWS:
                try:
                    total, summary = local_summary(rows.columns, types, kept)
                except ValueError as exc:
                    logger.info("%s: summary of the fetched rows failed (%s); asking the "
                                "engine", running.tag, exc)
                    total, summary = self._engine_summary(conn, sql, rows.columns, types, running)
        else:
            conn = self._stop_rows(conn, rows, running, deadline)
            total, summary = self._engine_summary(conn, sql, rows.columns, types, running)
        kept_rows = kept[: self.limits.chart_row_limit]
        return QueryResult(sql, columns, kept_rows, total, False, None, _ms_since(started),
                           types[:MAX_COLUMNS], summary, len(rows.columns))

    def _stop_rows(self, conn, rows, running: _Running, deadline: float):
        """Leave the rest of a result on the engine. PostgreSQL closes its portal; an
        unbuffered MySQL result can only be left by dropping its connection, so the
        summary then runs on a fresh one."""
        if self._backend.STOPS_EARLY:
            rows.close(exhausted=False)
            return conn
        with running.lock:
            running.connection = None
            running.session = None  # nothing of it runs on the engine any more
        self._pool.release(conn, reusable=False)
        rows.discard()
        return self._begin(max(0.001, deadline - time.monotonic()), running)

    def _engine_summary(self, conn, sql: str, columns: list[str], types: list[str],
                        running: _Running) -> tuple[int, list | None]:
        query = engine_summary_sql(sql, columns, types, self._backend.number_expr,
                                   self._backend.SUMMARY_FENCE)
        running.check()
        return read_summary(columns, types, self._backend.one_row(conn, query))

    def _row_cap(self) -> int:
        """Rows a query fetches at most: one more than it keeps, to know there are more."""
        return max(SHOWN_ROWS, self.limits.chart_row_limit) + 1

    def _stop(self, running: _Running, why: str) -> None:
        """Cancel ``running`` on the engine (``why``: "cancelled" or "timeout"), then
        again every ``_RECANCEL_S`` while it still runs: a cancel that lands between two
        of its statements finds nothing to cancel, and the next statement checks
        ``stopped`` first. Blocks until it ends (the watchdog's thread; ``cancel`` sends
        the first one itself and leaves the rest to a thread)."""
        for _ in range(_CANCEL_ATTEMPTS):
            if not self._stop_once(running, why):
                return
            time.sleep(_RECANCEL_S)

    def _stop_once(self, running: _Running, why: str) -> bool:
        """One cancel on the engine from another connection; whether to send another. A
        timed-out query whose source does not answer the cancel has its connection cut."""
        with running.lock:  # the session cannot end, and be reused, meanwhile
            if running.done:
                return False
            first = running.stopped is None
            running.stopped = running.stopped or why
            session, target = running.session, running.connection
            if session is None:  # not on the engine yet: it checks before it goes there
                return False
            try:
                with self._session(self.limits.timeout_s, row_cap=1) as helper:
                    self._backend.cancel(helper, session)
            except Exception as exc:
                logger.warning("%s: cancelling on the engine failed: %s", running.tag,
                               type(exc).__name__)
                if why == "timeout" and target is not None:
                    _shut_socket(target)
                return False
        if first:
            logger.info("%s: %s on the engine (session %s)", running.tag, why, session)
        return True

    @contextlib.contextmanager
    def _session(self, timeout_s: float, *, row_cap: int):
        """A pooled connection in its read-only session with the time limit and row cap
        given, for the engine's own statements (privileges, catalog, cancel); released
        afterwards."""
        conn, _ = self._pool.acquire()
        reusable = False
        try:
            self._backend.begin(conn, session_budget(timeout_s), row_cap)
            yield conn
            self._backend.end(conn)
            reusable = True
        finally:
            self._pool.release(conn, reusable=reusable)

    def _connect(self):
        """A new connection in the engine's read-only session. A source that takes the
        connection and then refuses the session's settings (a query allowance used up,
        the connection dropped) raises ``SourceUnreachable`` naming the driver's reason,
        as every failure to open one does: callers answer that family, not a driver's."""
        conn = self._open_connection()
        try:
            self._backend.prepare(conn)
        except BaseException as exc:
            with contextlib.suppress(Exception):
                conn.close()
            if isinstance(exc, (psycopg.Error, pymysql.err.MySQLError)):
                raise SourceUnreachable(
                    f"{self.display} took the connection but refused to prepare its "
                    f"read-only session: {self._driver_message(exc)}",
                    source=self.display) from None
            raise
        return conn

    def _failure(self, exc: Exception, running: _Running, budget_s: float,
                 conn) -> tuple[str, bool, bool]:
        """``(message, whether the connection may be reused, whether the connection was
        lost: the source's failure, not the statement's)`` for a failed query. A
        MySQL connection whose result a cancel or timeout cut is dropped: the unbuffered
        result may have left the protocol mid-stream."""
        interrupted_ok = self._backend.STOPS_EARLY
        if running.stopped == "cancelled":
            return ("the query was cancelled", interrupted_ok and self._still_usable(conn),
                    False)
        code = exc.args[0] if isinstance(exc, pymysql.err.MySQLError) and exc.args else None
        if (isinstance(exc, psycopg.errors.QueryCanceled) or code in _MYSQL_TIMEOUT
                or code in _MYSQL_KILLED or running.stopped == "timeout"):
            # The engine's statement timeout, or the watchdog's cancel past it.
            return (f"query exceeded the {budget_s:g} s limit and was cancelled on "
                    f"{self.title}; aggregate or filter more"), \
                interrupted_ok and self._still_usable(conn), False
        lost = (isinstance(exc, psycopg.OperationalError) and (conn is None or conn.closed)) \
            or isinstance(exc, pymysql.err.InterfaceError) or code in _MYSQL_LOST
        if lost:
            return (f"the connection to {self.display} was lost during the query; "
                    "try again"), False, True
        if isinstance(exc, (psycopg.Error, pymysql.err.MySQLError)):
            return self._driver_message(exc), self._still_usable(conn), False
        logger.exception("%s failed outside the driver", running.tag)
        return f"{type(exc).__name__}: {exc}", False, False

    def _driver_message(self, exc: Exception) -> str:
        if isinstance(exc, pymysql.err.MySQLError) and len(exc.args) >= 2:
            text = str(exc.args[1])
        elif isinstance(exc, psycopg.Error) and exc.diag.message_primary:
            # Without the statement excerpt: it would show the cursor wrapping the query.
            text = exc.diag.message_primary
            if exc.diag.message_hint:
                text += f" (hint: {exc.diag.message_hint})"
        else:
            text = str(exc).strip() or type(exc).__name__
        if self._password and self._password in text:
            return f"{self.title} refused the query (its message is withheld: it repeats " \
                   "the URL's password)"
        return text

    def _still_usable(self, conn) -> bool:
        if conn is None:
            return False
        try:
            self._backend.check_usable(conn)
            return True
        except Exception:
            return False


class _Stopped(Exception):
    """The query was cancelled, or ran past its time, between two of its statements."""


def _shut_socket(conn) -> None:
    """Unblock a thread reading from a PostgreSQL connection that no longer answers (a
    MySQL connection's own read timeout, set from the limits, does that there)."""
    if not hasattr(conn, "fileno"):
        return
    with contextlib.suppress(Exception):
        sock = socket.socket(fileno=conn.fileno())
        try:
            sock.shutdown(socket.SHUT_RDWR)
        finally:
            sock.detach()


def session_budget(timeout_s: float) -> float:
    """The server-side time limit given for a query with ``timeout_s`` left: rounded up
    to whole seconds (from 1 s), so that a pooled connection's setting, sent only when
    it changes, seldom does. The watchdog holds each query to its exact budget (plus
    ``WATCHDOG_GRACE_S``, which is longer than the rounding)."""
    if timeout_s >= 1:
        return float(math.ceil(timeout_s - 1e-6))
    return round(max(0.001, timeout_s), 3)


def _ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0
