"""Runs model-written SQL against a locked-down DuckDB file, inside one SQL process.

This is the code that touches DuckDB; ``engine/sql/child.py`` runs it in a process
of its own (see ``engine/sql/sandbox.py`` for why). Layers of defence, outermost
first:

1. ``sql_guard`` lets through exactly one read statement (DuckDB's parser decides,
   down to the whole parse tree) that reads no host metadata.
2. The database is opened ``read_only`` with ``enable_external_access=false`` (no
   files, no network: ``read_csv``, ``glob`` and ``'/etc/passwd'`` fail), extension
   autoload/autoinstall off, a memory limit, a thread cap, a private temporary
   directory capped at ``max_temp_directory_size``, and ``lock_configuration=true``
   last so nothing can loosen the rest.
3. Every query runs on its own cursor with a wall-clock budget enforced by the
   process's one watchdog thread (``engine/sql/watchdog.py``), which calls
   ``cursor.interrupt()``.
4. Only a bounded result leaves DuckDB (``result_sql.bounded_rows_sql``): at most
   ``chart_row_limit`` rows, every cell cut to what a cell shows, and fetching stops
   once ``result_max_bytes`` of rendered text have arrived.

A statement text that passed the guard and bound is kept with its bounded query
(``engine/sql/plans.py``): sent again, by another job asking the same question, it
only runs (each check is about 0.2-0.3 ms of DuckDB statement overhead).

``run`` never raises for SQL problems: refusals, DuckDB errors and timeouts come
back as ``QueryResult(is_error=True)``, which the SQL tool turns into an error for the
model, so it can correct itself and the job goes on.
"""
from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterable
from dataclasses import replace
from itertools import chain
from pathlib import Path
from typing import Any

import duckdb

from engine.sql.guard import SqlRefused, check_single_read_statement
from engine.sql.plans import StatementPlan, StatementPlans
from engine.sql.query_result import MAX_COLUMNS, SHOWN_ROWS, QueryResult
from engine.sql.result_sql import bounded_rows_sql, one_pass_sql, read_summary, summary_sql
from engine.sql.shape import repeats_cheaply
from engine.sql.watchdog import QueryWatchdog

logger = logging.getLogger(__name__)

# Rows per fetch stay under about this many characters, so that no single fetch
# (a chunk of rows turned into Python values at once) can be large.
_FETCH_CHARS = 1_000_000
# DuckDB settings a caller may read back (``settings``): none of them names a path.
REPORTED_SETTINGS = ("access_mode", "enable_external_access", "lock_configuration",
                     "autoload_known_extensions", "autoinstall_known_extensions",
                     "memory_limit", "threads", "max_temp_directory_size")


def timeout_message(budget_s: float) -> str:
    return (f"query exceeded the {budget_s:g} s limit and was cancelled; "
            "aggregate or filter more")


class DuckDbExecutor:
    """One read-only DuckDB database and the bounded way of querying it. One thread."""

    def __init__(self, path: str | Path, *, memory_limit: str, threads: int,
                 temp_directory: str, max_temp_size: str, chart_row_limit: int,
                 result_max_bytes: int) -> None:
        """Open the file; raises ``duckdb.Error`` if it cannot be opened, or
        ``RuntimeError`` if the configuration did not lock."""
        self.path = str(path)
        self.chart_row_limit = int(chart_row_limit)
        self.result_max_bytes = int(result_max_bytes)
        # Dict order matters: lock_configuration comes last so that it freezes
        # the settings above it rather than racing them.
        config: dict[str, Any] = {
            "enable_external_access": False,
            "autoload_known_extensions": False,
            "autoinstall_known_extensions": False,
            "memory_limit": memory_limit,
            "threads": int(threads),
            "temp_directory": temp_directory,
            "max_temp_directory_size": max_temp_size,
            "lock_configuration": True,
        }
        self._con = duckdb.connect(self.path, read_only=True, config=config)
        self._verify_locked()
        self._watchdog = QueryWatchdog()
        # Statements already guarded and bound here: sent again, they only run.
        self._plans = StatementPlans()
        # What an error message must not show the model: where things are on this host.
        self._host_paths = sorted({str(Path(self.path).resolve().parent), temp_directory,
                                   str(Path.home())}, key=len, reverse=True)

    def run(self, sql: str, budget_s: float, tag: str = "",
            limit_s: float | None = None) -> QueryResult:
        """Guard, execute and summarise ``sql`` within ``budget_s`` seconds; never raises
        for SQL problems (see the module doc). ``limit_s`` is the limit a timeout names
        (the query's whole budget, of which ``budget_s`` may be what is left)."""
        started = time.perf_counter()
        plan = self._plans.get(sql)
        if plan is not None:
            cleaned = plan.sql
        else:
            text = sql.strip() if isinstance(sql, str) else repr(sql)
            try:
                cleaned = check_single_read_statement(sql)
            except SqlRefused as refused:
                logger.info("%s refused: %s", tag, refused.message)
                return QueryResult.failed(text, refused.message, _ms_since(started))
        cursor = self._con.cursor()
        watchdog = self._watchdog
        try:
            watchdog.arm(cursor, budget_s)
            if plan is None:
                plan = self._plan(cursor, sql, cleaned)
            return self._execute(cursor, watchdog, sql, plan, started, tag)
        except Exception as exc:  # the tool boundary: report, don't raise
            if watchdog.fired:
                message = timeout_message(budget_s if limit_s is None else limit_s)
            elif isinstance(exc, duckdb.Error):
                message = self._without_host_paths(str(exc))
            else:
                logger.exception("%s failed outside DuckDB", tag)
                message = f"{type(exc).__name__}: {exc}"
            logger.info("%s failed: %s", tag, message.splitlines()[0] if message else "")
            return QueryResult.failed(cleaned, message, _ms_since(started))
        finally:
            watchdog.disarm()
            with contextlib.suppress(duckdb.Error):  # must not mask the result
                cursor.close()

    def _plan(self, cursor: Any, text: str, cleaned: str) -> StatementPlan:
        """Bind ``cleaned`` (names and types; nothing executed yet), build its bounded
        query and keep both for ``text`` (the statement as sent)."""
        relation = cursor.sql(cleaned)
        columns = tuple(str(name) for name in relation.columns)
        types = tuple(str(kind) for kind in relation.types)
        limit = max(SHOWN_ROWS, self.chart_row_limit) + 1
        # Rows and summary in one run, unless a second run costs little (engine/sql/shape.py).
        once = None if repeats_cheaply(cleaned) else one_pass_sql(
            cleaned, columns, types, limit, self.result_max_bytes)
        plan = StatementPlan(cleaned, columns, types, bounded_rows_sql(cleaned, types, limit),
                             once)
        self._plans.put(text, plan)
        return plan

    def _execute(self, cursor: Any, watchdog: QueryWatchdog, text: str, plan: StatementPlan,
                 started: float, tag: str) -> QueryResult:
        sql, all_columns, all_types = plan.sql, list(plan.columns), list(plan.types)
        columns, types = all_columns[:MAX_COLUMNS], all_types[:MAX_COLUMNS]
        once = self._run_once(cursor, watchdog, plan, tag) if plan.one_pass else None
        if once is not None:
            rows, complete, total_rows, summary = once
        else:
            rows, complete = self._fetch_bounded(cursor, plan.bounded, len(columns))
        if len(rows) <= SHOWN_ROWS and complete:
            total_rows, summary = len(rows), None
        elif once is None:
            total_rows, summary = self._summarise(cursor, watchdog, sql, all_columns,
                                                  all_types, tag)
        if plan.one_pass is not None and (once is None or total_rows <= SHOWN_ROWS):
            # Sent again, it runs the two-query way: its result needs no summary (the one
            # query would cost it 2-3 ms more than its rows alone), or DuckDB refused it.
            self._plans.put(text, replace(plan, one_pass=None))
        watchdog.check()
        kept = rows[: self.chart_row_limit]
        ms = _ms_since(started)
        logger.info("%s rows=%s kept=%s ms=%.1f", tag, total_rows, len(kept), ms)
        return QueryResult(sql, columns, kept, total_rows, False, None, ms, types, summary,
                           len(all_columns))

    def _run_once(self, cursor: Any, watchdog: QueryWatchdog, plan: StatementPlan,
                  tag: str) -> tuple[list[tuple], bool, int, list] | None:
        """``(rows, complete, total rows, summary)`` from the one query that runs the
        statement once (``result_sql.one_pass_sql``): the rows ``_fetch_bounded`` would
        fetch, and what ``_summarise`` would say. ``None`` if DuckDB refused it (e.g. a
        sum overflowing): the caller then goes the two-query way, which says what it says."""
        try:
            row = cursor.execute(plan.one_pass.sql).fetchone()
        except duckdb.Error as exc:
            if watchdog.fired:
                raise
            logger.info("%s one-pass query failed (%s); running rows and summary apart", tag,
                        str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
            return None
        rows, complete = self._within_budget(plan.one_pass, row[-1] or ())
        total_rows, summary = read_summary(plan.columns, plan.types, row[:-1])
        fetchable = min(total_rows, max(SHOWN_ROWS, self.chart_row_limit) + 1)
        return rows, complete and len(rows) == fetchable, total_rows, summary

    def _fetch_bounded(self, cursor: Any, bounded: Any, columns: int) -> tuple[list[tuple], bool]:
        """Rows of the bounded query until its end (``complete``) or until their rendered
        size passes ``result_max_bytes``."""
        cursor.execute(bounded.sql)
        per_fetch = max(1, min(1000, _FETCH_CHARS // max(1, columns * 1001)))
        return self._within_budget(bounded, chain.from_iterable(
            iter(lambda: cursor.fetchmany(per_fetch), [])))

    def _within_budget(self, bounded: Any, raw_rows: Iterable[Any]) -> tuple[list[tuple], bool]:
        """The decoded ``raw_rows`` up to the one whose running rendered size passes
        ``result_max_bytes`` (the first always comes), and whether all of them came."""
        rows: list[tuple] = []
        size = 0
        for raw in raw_rows:
            values, row_size = bounded.decode(raw)
            size += row_size
            if size > self.result_max_bytes and rows:
                return rows, False
            rows.append(values)
        return rows, True

    def _summarise(self, cursor: Any, watchdog: QueryWatchdog, sql: str, columns: list[str],
                   types: list[str], tag: str) -> tuple[int, list | None]:
        """Count and summarise the whole result in DuckDB (see result_sql)."""
        watchdog.check()
        try:
            row = cursor.execute(summary_sql(sql, columns, types)).fetchone()
            return read_summary(columns, types, row)
        except duckdb.Error as exc:
            if watchdog.fired or isinstance(exc, duckdb.OutOfMemoryException):
                raise
            # Rare (e.g. a statement DuckDB will not nest, or a sum overflow):
            # still report the true row count, counting without keeping rows.
            logger.warning("%s summary query failed; counting rows instead", tag, exc_info=True)
        watchdog.check()
        total = cursor.execute(f"SELECT count(*) FROM (\n{sql}\n)").fetchone()[0]
        return int(total), None

    def describe_schema(self) -> list[tuple[str, list[tuple[str, str]]]]:
        """``[(table, [(column, type), ...]), ...]`` for every table and view: tables
        sorted by name (``schema.table`` outside ``main``), columns in ordinal order."""
        cursor = self._con.cursor()
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
        return sorted(tables.items())

    def settings(self) -> dict[str, str]:
        """The ``REPORTED_SETTINGS`` as DuckDB holds them (for checks and tests)."""
        cursor = self._con.cursor()
        try:
            return dict(cursor.execute(
                "SELECT name, value FROM duckdb_settings() WHERE list_contains(?, name)",
                [list(REPORTED_SETTINGS)]).fetchall())
        finally:
            cursor.close()

    def close(self) -> None:
        self._watchdog.close()
        self._con.close()

    def _without_host_paths(self, message: str) -> str:
        for path in self._host_paths:
            if len(path) > 1:
                message = message.replace(path, "<server path>")
        return message

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


def _ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0
