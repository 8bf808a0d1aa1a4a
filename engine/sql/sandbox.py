"""The SQL sandbox: model-written SQL run in SQL processes the worker can stop.

Why processes: DuckDB's ``memory_limit`` and ``interrupt()`` cover its buffer pool and
its operators, not every allocation. ``SELECT range(0, 100000000)`` builds one
multi-gigabyte value outside the pool, in a single step no interrupt reaches: run in
the worker, it took 25 s under a 10 s limit and 7 GB under a 1 GB limit, and a few
such queries at once would have the kernel kill the worker and every job in it.
So each query runs in a separate process (``engine/sql/child.py`` running
``engine/sql/executor.py``) whose address space is capped (``memory_limit`` plus
``ADDRESS_SPACE_HEADROOM``): such an allocation fails there with DuckDB's "Out of
Memory" error, and a process that still overruns its time budget by
``KILL_GRACE_S`` is killed and replaced. The worker's own memory and time stay
bounded whatever the SQL does.

One ``SqlSandbox`` per worker process per database file, shared by every job
thread: it keeps up to ``processes`` SQL processes, started as they are needed (the
first when the sandbox is built, so a file that cannot be opened fails at once),
and hands each query to an idle one; a query that finds all busy waits for one
within its own budget. ``run`` returns data only (``engine/sql/query_result.py``; the SQL
tool writes the text) and never raises for SQL problems: refusals, DuckDB errors,
timeouts and a killed process come back as ``QueryResult(is_error=True)``.
"""
from __future__ import annotations

import logging
import os
import re
import threading
import time
from pathlib import Path
from typing import Any

import duckdb

from engine.sql.executor import timeout_message
from engine.sql.process import START_TIMEOUT_S, Died, Overran, SqlProcess
from engine.sql.query_result import QueryResult
from shared.config import Settings

logger = logging.getLogger(__name__)

# Above DuckDB's memory_limit: the interpreter, DuckDB's code and threads (about
# 0.8 GB of address space at rest) and its allocations outside the buffer pool.
ADDRESS_SPACE_HEADROOM = 2 * 1024**3
# A process still busy this long after its query's budget is killed (the query's own
# interrupt normally ends it well before).
KILL_GRACE_S = 2.0
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]i?B|B)?\s*$", re.IGNORECASE)
_UNITS = {"b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3, "tb": 1000**4,
          "kib": 1024, "mib": 1024**2, "gib": 1024**3, "tib": 1024**4}


class SqlSandbox:
    """A read-only, resource-limited DuckDB database shared by many threads.

    The constructor starts the first SQL process and raises ``duckdb.Error`` if the
    file cannot be opened, or ``RuntimeError`` if the configuration did not lock.
    All public methods are thread-safe.
    """

    def __init__(self, path: str | Path, *, memory_limit: str = "1GB", threads: int = 2,
                 timeout_s: float = 10.0, chart_row_limit: int = 5000, processes: int = 2,
                 max_temp_size: str = "1GB", result_max_bytes: int = 2_000_000) -> None:
        self.path = str(path)
        self.timeout_s = float(timeout_s)
        self.chart_row_limit = int(chart_row_limit)
        self.processes = max(1, int(processes))
        self._config = {
            "path": self.path, "memory_limit": memory_limit, "threads": int(threads),
            "max_temp_size": max_temp_size, "chart_row_limit": self.chart_row_limit,
            "result_max_bytes": int(result_max_bytes),
            "address_space_bytes": parse_size(memory_limit) + ADDRESS_SPACE_HEADROOM,
        }
        self._cond = threading.Condition()
        self._idle: list[SqlProcess] = []
        self._alive = 1
        self._closed = False
        self._schema: list[tuple[str, list[tuple[str, str]]]] | None = None
        first = SqlProcess(self._config)  # raises what opening the file raises
        self._release(first)
        logger.info("sql sandbox opened %s (memory_limit=%s threads=%s timeout=%ss, up to %d "
                    "processes)", self.path, memory_limit, threads, self.timeout_s,
                    self.processes)

    def run(self, sql: str, *, timeout_s: float | None = None, label: str = "") -> QueryResult:
        """Guard, execute and summarise ``sql``; never raises for SQL problems.

        The whole call, waiting for an idle SQL process included, shares one time
        budget (``timeout_s`` if given, e.g. a job's remaining time, else the
        sandbox's); on expiry the query is interrupted and the result says so.
        ``label`` only labels the log lines (the job is in every line already).
        """
        budget = self.timeout_s if timeout_s is None else float(timeout_s)
        started = time.perf_counter()
        deadline = time.monotonic() + budget
        tag = label or "query"
        text = sql.strip() if isinstance(sql, str) else repr(sql)
        try:
            process = self._acquire(deadline)
        except (RuntimeError, duckdb.Error) as exc:
            return QueryResult.failed(text, str(exc), _ms_since(started))
        try:
            remaining = max(0.0, deadline - time.monotonic())
            result = process.request(("run", sql, remaining, tag, budget),
                                     timeout=remaining + KILL_GRACE_S)
        except Overran:
            logger.warning("%s: the SQL process overran its budget and was killed", tag)
            result = QueryResult.failed(text, timeout_message(budget), _ms_since(started))
        except Died as died:
            logger.warning("%s: the SQL process ended: %s", tag, died)
            result = QueryResult.failed(text, died_message(died), _ms_since(started))
        except (RuntimeError, duckdb.Error) as exc:  # reported by the process, which goes on
            logger.warning("%s: the SQL process reported %s", tag, exc)
            result = QueryResult.failed(text, str(exc), _ms_since(started))
        finally:
            self._release(process)
        logger.info("%s rows=%s ms=%.1f%s", tag, result.total_rows, result.ms,
                    " (error)" if result.is_error else "")
        return result

    def describe_schema(self) -> list[tuple[str, list[tuple[str, str]]]]:
        """``[(table, [(column, type), ...]), ...]`` for every table and view.

        Tables sorted by name (``schema.table`` outside ``main``), columns in
        ordinal order, so a system prompt built from it is byte-stable. Cached
        (the file is read-only). Raises ``duckdb.Error``, or ``RuntimeError`` if closed.
        """
        with self._cond:
            if self._schema is not None:
                return [(table, list(cols)) for table, cols in self._schema]
        schema = self._ask(("schema",))
        with self._cond:
            self._schema = schema
        return [(table, list(cols)) for table, cols in schema]

    def settings(self) -> dict[str, str]:
        """DuckDB's safety settings as a SQL process holds them (names without paths)."""
        return self._ask(("settings",))

    def process_ids(self) -> list[int]:
        """The pids of the SQL processes now idle (for benchmarks and tests)."""
        with self._cond:
            return [process.pid for process in self._idle]

    def close(self) -> None:
        """Stop every SQL process; idempotent. Later ``run`` calls return errors."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            idle, self._idle = self._idle, []
            self._cond.notify_all()
        for process in idle:
            process.stop()
        logger.info("sql sandbox closed %s", self.path)

    @property
    def closed(self) -> bool:
        return self._closed

    def _ask(self, request: tuple) -> Any:
        process = self._acquire(time.monotonic() + START_TIMEOUT_S)
        try:
            return process.request(request, timeout=START_TIMEOUT_S)
        except (Overran, Died) as exc:
            raise RuntimeError(f"the SQL process failed: {exc}") from None
        finally:
            self._release(process)

    def _acquire(self, deadline: float) -> SqlProcess:
        with self._cond:
            while True:
                if self._closed:
                    raise RuntimeError("the SQL sandbox is closed")
                while self._idle:
                    process = self._idle.pop()
                    if process.proc.poll() is None:
                        return process
                    self._alive -= 1  # ended while idle (killed from outside)
                    process.kill()
                if self._alive < self.processes:
                    self._alive += 1
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise RuntimeError(f"all {self.processes} SQL processes stayed busy for "
                                       "this query's whole time budget; try again")
                self._cond.wait(remaining)
        try:
            return SqlProcess(self._config)
        except BaseException:
            with self._cond:
                self._alive -= 1
                self._cond.notify()
            raise

    def _release(self, process: SqlProcess) -> None:
        with self._cond:
            keep = process.alive and not self._closed
            if keep:
                self._idle.append(process)
            else:
                self._alive -= 1
            self._cond.notify()
        if not keep:
            process.stop()


def parse_size(text: str) -> int:
    """Bytes in a DuckDB size setting such as ``"1GB"`` (10^9) or ``"512MiB"``."""
    match = _SIZE.match(str(text))
    if not match:
        raise ValueError(f"{text!r} is not a size such as 1GB or 512MiB")
    number, unit = match.groups()
    return int(float(number) * _UNITS[(unit or "b").lower()])


def died_message(died: Died) -> str:
    """What a query whose SQL process ended is told: memory only when that is how the
    process ended (``engine/child_process.py``), else how it ended."""
    if died.out_of_memory:
        return ("the query was stopped: it needed more memory than the SQL sandbox allows; "
                "aggregate or filter more")
    return f"the query was stopped: its SQL process ended unexpectedly ({died}); try again"


def _ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0


def sandbox_settings(settings: Settings) -> dict[str, Any]:
    """The ``SqlSandbox`` keyword arguments that ``settings`` give."""
    return {"memory_limit": settings.sql_memory_limit, "threads": settings.sql_threads,
            "timeout_s": settings.sql_timeout_s, "chart_row_limit": settings.chart_row_limit,
            "processes": settings.sql_processes, "max_temp_size": settings.sql_temp_max,
            "result_max_bytes": settings.sql_result_max_bytes}


def get_sandbox(path: str | Path, **settings: Any) -> SqlSandbox:
    """Return this process's sandbox for ``(path, settings)``, opening it on first use.

    Keyed by process id too, so a forked child never reuses its parent's SQL
    processes. A closed sandbox is replaced. Raises what ``SqlSandbox`` raises.
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


def read_statement_problem(sql: str) -> str | None:
    """Why ``sql`` is not one read-only statement the sandbox would run, or None; checked
    without a database (a schedule's condition is checked so when it is saved)."""
    from engine.sql.guard import SqlRefused, check_single_read_statement

    try:
        check_single_read_statement(sql)
    except SqlRefused as exc:
        return exc.message
    return None
