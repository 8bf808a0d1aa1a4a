"""The ``execute_sql`` tool: model-written SQL against a locked-down DuckDB file.

One ``SqlSandbox`` per process per database file, shared by every job thread.
Layers of defence, outermost first:

1. ``sql_guard`` lets through exactly one statement that DuckDB's parser
   classifies as SELECT (so no COPY, ATTACH, INSTALL/LOAD, SET, PRAGMA, DDL/DML).
2. The database is opened ``read_only`` with ``enable_external_access=false``
   (no files, no network: ``read_csv``, ``glob`` and ``'/etc/passwd'`` fail),
   extension autoload/autoinstall off, a memory limit, a thread cap, and
   ``lock_configuration=true`` last so nothing can loosen the rest.
3. Every query runs on its own cursor with a wall-clock budget enforced by a
   ``threading.Timer`` that calls ``cursor.interrupt()``.

``run`` never raises for SQL problems: refusals, DuckDB errors and timeouts come
back as ``QueryResult(is_error=True)`` whose text goes to the model, so it can
correct itself and the job goes on.

DuckDB allows one configuration per file per process: a second sandbox on the
same file must use the same ``memory_limit``/``threads`` (``timeout_s`` and
``chart_row_limit`` are ours and may differ), and nothing else in the process
may open that file with a plain ``duckdb.connect`` while a sandbox holds it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

import duckdb

from worker.sql_guard import SqlRefused, check_single_read_statement
from worker.tool_result import (
    SHOWN_ROWS,
    QueryResult,
    format_result,
    read_summary,
    summary_sql,
)

__all__ = ["QueryResult", "SqlSandbox", "close_sandboxes", "get_sandbox"]

logger = logging.getLogger(__name__)

# How often a timed-out query is re-interrupted: DuckDB clears the interrupt
# flag when a new query starts, so one interrupt could land between the main
# query and the summary query and be lost.
_REINTERRUPT_S = 0.1


class SqlSandbox:
    """A read-only, resource-limited DuckDB database shared by many threads.

    The constructor opens the file once and raises ``duckdb.Error`` if it
    cannot be opened, or ``RuntimeError`` if the configuration did not lock.
    All public methods are thread-safe.
    """

    def __init__(self, path: str | Path, *, memory_limit: str = "1GB", threads: int = 2,
                 timeout_s: float = 10.0, chart_row_limit: int = 5000) -> None:
        self.path = str(path)
        self.timeout_s = float(timeout_s)
        self.chart_row_limit = int(chart_row_limit)
        self._lock = threading.Lock()
        self._closed = False
        self._schema: list[tuple[str, list[tuple[str, str]]]] | None = None
        # Dict order matters: lock_configuration comes last so that it freezes
        # the settings above it rather than racing them.
        config: dict[str, Any] = {
            "enable_external_access": False,
            "autoload_known_extensions": False,
            "autoinstall_known_extensions": False,
            "memory_limit": memory_limit,
            "threads": int(threads),
            "lock_configuration": True,
        }
        self._con = duckdb.connect(self.path, read_only=True, config=config)
        self._verify_locked()
        logger.info("sql sandbox opened %s (memory_limit=%s threads=%s timeout=%ss)",
                    self.path, memory_limit, threads, self.timeout_s)

    def run(self, sql: str, query_id: int, *, timeout_s: float | None = None,
            job_id: object = None) -> QueryResult:
        """Guard, execute and summarise ``sql``; never raises for SQL problems.

        Fetches at most ``max(26, chart_row_limit + 1)`` rows. When the result
        has more than 25 rows, a second query over ``(<sql>)`` counts all rows
        and computes the numeric summary inside DuckDB. The whole call shares
        one time budget (``timeout_s`` if given, e.g. a job's remaining time,
        else the sandbox's); on expiry the query is interrupted and the result
        says so. ``job_id`` only labels the log lines.
        """
        budget = self.timeout_s if timeout_s is None else float(timeout_s)
        started = time.perf_counter()
        tag = f"job={job_id} query_id={query_id}"
        text = sql.strip() if isinstance(sql, str) else repr(sql)
        try:
            cleaned = check_single_read_statement(sql)
        except SqlRefused as refused:
            logger.info("%s refused: %s", tag, refused.message)
            return QueryResult.failed(query_id, text, refused.message, _ms_since(started))
        try:
            cursor = self._cursor()
        except (RuntimeError, duckdb.Error) as exc:
            return QueryResult.failed(query_id, cleaned, str(exc), _ms_since(started))
        watchdog = _Watchdog(cursor, budget)
        try:
            return self._execute(cursor, watchdog, cleaned, query_id, started, tag)
        except Exception as exc:  # the tool boundary: report, don't raise
            if watchdog.fired:
                message = (f"query exceeded the {budget:g} s limit and was cancelled; "
                           "aggregate or filter more")
            elif isinstance(exc, duckdb.Error):
                message = str(exc)
            else:
                logger.exception("%s failed outside DuckDB", tag)
                message = f"{type(exc).__name__}: {exc}"
            logger.info("%s failed: %s", tag, message.splitlines()[0])
            return QueryResult.failed(query_id, cleaned, message, _ms_since(started))
        finally:
            watchdog.stop()
            with contextlib.suppress(duckdb.Error):  # must not mask the result
                cursor.close()

    def _execute(self, cursor: Any, watchdog: _Watchdog, sql: str, query_id: int,
                 started: float, tag: str) -> QueryResult:
        watchdog.start()
        cursor.execute(sql)
        if cursor.description is None:
            raise duckdb.InvalidInputException("the statement returned no result set")
        columns = [str(col[0]) for col in cursor.description]
        types = [str(col[1]) for col in cursor.description]
        fetched = cursor.fetchmany(max(SHOWN_ROWS + 1, self.chart_row_limit + 1))
        total_rows, summary = len(fetched), None
        if len(fetched) > SHOWN_ROWS:
            total_rows, summary = self._summarise(cursor, watchdog, sql, columns, types, tag)
        watchdog.check()
        text = format_result(query_id, columns, fetched, total_rows, summary)
        ms = _ms_since(started)
        logger.info("%s rows=%s ms=%.1f", tag, total_rows, ms)
        return QueryResult(query_id, sql, columns, fetched[: self.chart_row_limit], total_rows,
                           text, False, None, ms, types, summary)

    def _summarise(self, cursor: Any, watchdog: _Watchdog, sql: str, columns: list[str],
                   types: list[str], tag: str) -> tuple[int, list | None]:
        """Count and summarise the whole result in DuckDB (see tool_result)."""
        watchdog.check()
        try:
            row = cursor.execute(summary_sql(sql, columns, types)).fetchone()
            return read_summary(columns, types, row)
        except duckdb.Error:
            if watchdog.fired:
                raise
            # Rare (e.g. a statement DuckDB will not nest, or a sum overflow):
            # still report the true row count, streaming it without keeping rows.
            logger.warning("%s summary query failed; counting rows instead", tag, exc_info=True)
        watchdog.check()
        cursor.execute(sql)
        total = 0
        while chunk := cursor.fetchmany(10_000):
            total += len(chunk)
        return total, None

    def describe_schema(self) -> list[tuple[str, list[tuple[str, str]]]]:
        """``[(table, [(column, type), ...]), ...]`` for every table and view.

        Tables sorted by name (``schema.table`` outside ``main``), columns in
        ordinal order, so a system prompt built from it is byte-stable. Cached
        (the file is read-only). Raises ``duckdb.Error``, or ``RuntimeError`` if closed.
        """
        with self._lock:
            if self._schema is not None:
                return [(table, list(cols)) for table, cols in self._schema]
        cursor = self._cursor()
        try:
            rows = cursor.execute(
                "SELECT schema_name, table_name, column_name, data_type FROM duckdb_columns() "
                "WHERE NOT internal AND database_name = current_database() "
                "ORDER BY schema_name, table_name, column_index"
            ).fetchall()
        finally:
            cursor.close()
        tables: dict[str, list[tuple[str, str]]] = {}
        for schema_name, table_name, column_name, data_type in rows:
            name = table_name if schema_name == "main" else f"{schema_name}.{table_name}"
            tables.setdefault(name, []).append((column_name, data_type))
        schema = sorted(tables.items())
        with self._lock:
            self._schema = schema
        return [(table, list(cols)) for table, cols in schema]

    def close(self) -> None:
        """Close the database; idempotent. Later ``run`` calls return errors."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._con.close()
        logger.info("sql sandbox closed %s", self.path)

    @property
    def closed(self) -> bool:
        return self._closed

    def _cursor(self) -> Any:
        # cursor() registers the child on the parent connection; serialise it.
        with self._lock:
            if self._closed:
                raise RuntimeError("the SQL sandbox is closed")
            return self._con.cursor()

    def _verify_locked(self) -> None:
        cursor = self._con.cursor()
        try:
            cursor.execute("SET threads = 1")
        except duckdb.Error:
            return
        finally:
            cursor.close()
        self._con.close()
        raise RuntimeError("DuckDB accepted SET after lock_configuration=true; refusing to run")


class _Watchdog:
    """Interrupts a cursor once ``timeout_s`` has passed, until stopped."""

    def __init__(self, cursor: Any, timeout_s: float) -> None:
        self._cursor = cursor
        self._done = threading.Event()
        self._lock = threading.Lock()
        self.fired = False
        self._timer = threading.Timer(timeout_s, self._interrupt)
        self._timer.daemon = True

    def start(self) -> None:
        self._timer.start()

    def check(self) -> None:
        """Raise ``duckdb.InterruptException`` if the budget is already spent."""
        if self.fired:
            raise duckdb.InterruptException("Interrupted by the query time limit")

    def stop(self) -> None:
        with self._lock:  # after this, _interrupt never touches the cursor again
            self._done.set()
        self._timer.cancel()

    def _interrupt(self) -> None:
        while True:
            with self._lock:
                if self._done.is_set():
                    return
                self.fired = True
                try:
                    self._cursor.interrupt()
                except Exception:  # the cursor may be mid-close
                    logger.debug("interrupt failed", exc_info=True)
            if self._done.wait(_REINTERRUPT_S):
                return


def _ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0


def get_sandbox(path: str | Path, **settings: Any) -> SqlSandbox:
    """Return this process's sandbox for ``(path, settings)``, opening it on first use.

    Keyed by process id too, so a forked child never reuses its parent's
    DuckDB handle. A closed sandbox is replaced. Raises what ``SqlSandbox``
    raises.
    """
    global _SANDBOXES
    key = (os.getpid(), str(Path(path).resolve()), tuple(sorted(settings.items())))
    with _REGISTRY_LOCK:
        if _SANDBOXES is None:
            _SANDBOXES = {}
        sandbox = _SANDBOXES.get(key)
        if sandbox is None or sandbox.closed:
            sandbox = _SANDBOXES[key] = SqlSandbox(path, **settings)
        return sandbox


def close_sandboxes() -> None:
    """Close and forget every cached sandbox (worker shutdown, tests)."""
    global _SANDBOXES
    with _REGISTRY_LOCK:
        sandboxes, _SANDBOXES = list((_SANDBOXES or {}).values()), None
    for sandbox in sandboxes:
        sandbox.close()


# A bare lock is not a resource; the dict it guards is created on first use.
_REGISTRY_LOCK = threading.Lock()
_SANDBOXES: dict[tuple, SqlSandbox] | None = None
