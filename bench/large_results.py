"""Figure 6, large results: building the tool result of a query that returns over a
million rows, the shipped way (the sandbox: first rows + a summary computed inside
DuckDB) vs the naive way (fetch every row into Python and summarise there).

Each way runs in a fresh child process (``python -m bench.large_results WAY ROWS``)
so its peak resident memory is its own; memory is reported as the growth of the
peak over the process's size just before the query -- for the sandbox, that of its
SQL process (where DuckDB runs) plus that of the process receiving the result. Both ways open the sample DuckDB
with the same thread count and memory limit and first read every column the query
touches (an aggregate over it), so DuckDB's cache of the table is warm and outside
the figure: what remains is what the result itself costs. The sandbox also runs the
query three times larger, to show that its memory does not grow with the result.
"""
from __future__ import annotations

import contextlib
import json
import logging
import resource
import subprocess
import sys
import time
from pathlib import Path

from bench.figures import result, row
from bench.stack import SAMPLE_DUCKDB
from shared.config import PROJECT_ROOT, Settings

logger = logging.getLogger(__name__)

SPEED_TARGET = 10.0
COLUMNS = "f.year, f.month, f.day, f.carrier, f.origin, f.dest, f.dep_delay, f.arr_delay, " \
          "f.air_time, f.distance"


def large_sql(copies: int, limit: int | None = None) -> str:
    """The flights table ``copies`` times over (336,776 rows each), optionally cut."""
    sql = f"SELECT {COLUMNS}, r.copy FROM flights f, range({copies}) AS r(copy)"
    return sql + (f" LIMIT {limit}" if limit else "")


def run(smoke: bool = False, profile: bool = False) -> dict:
    sql = large_sql(1, 20_000) if smoke else large_sql(3)
    bigger = large_sql(1, 60_000) if smoke else large_sql(9)
    sandbox, python = _child("sandbox", sql), _child("python", sql)
    sandbox_3x = _child("sandbox", bigger)
    if sandbox["head"] != python["head"]:
        raise RuntimeError(f"the two ways disagree: {sandbox['head']!r} vs {python['head']!r}")
    speedup = python["seconds"] / sandbox["seconds"]
    rows = [
        row("6 large results", f"tool result of {sandbox['rows']:,} rows: time, sandbox vs "
            "fetch-all + Python summary", f"{sandbox['seconds'] * 1000:,.0f} ms",
            f"{python['seconds'] * 1000:,.0f} ms", speedup, f"≥ {SPEED_TARGET:g}× faster",
            speedup >= SPEED_TARGET),
        row("6 large results", f"peak memory growth while building it, sandbox vs fetch-all "
            f"(sandbox on {sandbox_3x['rows']:,} rows)",
            f"{sandbox['peak_growth_mb']:,.0f} MB ({sandbox_3x['peak_growth_mb']:,.0f} MB)",
            f"{python['peak_growth_mb']:,.0f} MB",
            python["peak_growth_mb"] / max(1.0, sandbox["peak_growth_mb"]),
            "bounded: flat in the row count", _bounded(sandbox, sandbox_3x, python)),
    ]
    return result("large_results", smoke, rows, sql=sql, sandbox=sandbox, python=python,
                  sandbox_3x_rows=sandbox_3x)


def _bounded(sandbox: dict, sandbox_3x: dict, python: dict) -> bool:
    """Three times the rows costs the sandbox no more than a little slack (the rows kept
    for charts are capped), and it stays far below holding the rows in Python."""
    slack_mb = 32
    return (sandbox_3x["peak_growth_mb"] <= sandbox["peak_growth_mb"] + slack_mb
            and sandbox["peak_growth_mb"] < 0.25 * python["peak_growth_mb"])


def _child(way: str, sql: str) -> dict:
    done = subprocess.run([sys.executable, "-m", "bench.large_results", way, sql],
                          cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=600,
                          check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{way} child failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _peak_mb(pid: int | str = "self") -> float:
    """Peak resident size of a process since the last ``_reset_peak`` (VmHWM), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _reset_peak(pid: int | str = "self") -> float:
    """Forget a process's peak so far (the warm-up's), then return its size in MB."""
    with contextlib.suppress(OSError):  # Linux >= 4.0: "5" resets VmHWM
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    return _current_mb(pid)


def _current_mb(pid: int | str = "self") -> float:
    with open(f"/proc/{pid}/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize() / 2**20


def _via_sandbox(sql: str, mark) -> tuple[str, int, float, float]:
    """The shipped way. DuckDB runs in the sandbox's SQL process, so its growth is
    measured there and added to this process's (the worker's side: the result)."""
    from engine.sql.result_text import result_text
    from engine.sql.sandbox import SqlSandbox, sandbox_settings

    settings = Settings()
    sandbox = SqlSandbox(SAMPLE_DUCKDB, **{**sandbox_settings(settings), "timeout_s": 120,
                                           "processes": 1})
    try:
        sandbox.run(_warm_sql(sql))
        (pid,) = sandbox.process_ids()
        before = _reset_peak(pid)
        mark()
        started = time.perf_counter()
        query = sandbox.run(sql)
        text = result_text(query, 1)
        seconds = time.perf_counter() - started
        return text, query.total_rows, seconds, max(0.0, _peak_mb(pid) - before)
    finally:
        sandbox.close()


def _via_python(sql: str, mark) -> tuple[str, int, float, float]:
    import duckdb

    from engine.sql.query_result import ColumnSummary
    from engine.sql.result_text import format_result

    settings = Settings()
    con = duckdb.connect(str(SAMPLE_DUCKDB), read_only=True, config={
        "memory_limit": settings.sql_memory_limit, "threads": settings.sql_threads})
    con.execute(_warm_sql(sql)).fetchall()
    mark()
    started = time.perf_counter()
    cursor = con.execute(sql)
    columns = [str(col[0]) for col in cursor.description]
    rows = cursor.fetchall()
    summaries = []
    for index, name in enumerate(columns):
        if name.lower().endswith(("_id", "_pk", "_code")):
            continue
        numbers = [v for r in rows if isinstance(v := r[index], int | float)
                   and not isinstance(v, bool)]
        if numbers and len(numbers) * 2 > len(rows):
            total = sum(numbers)
            summaries.append(ColumnSummary(name, len(numbers), total, min(numbers),
                                           max(numbers), total / len(numbers)))
    text = format_result(1, columns, rows, len(rows), summaries)
    return text, len(rows), time.perf_counter() - started, 0.0


def _warm_sql(sql: str) -> str:
    """One aggregate row that reads every column of ``sql``: warms DuckDB's cache."""
    return f"SELECT max(COLUMNS(*)) FROM ({sql})"


def main(way: str, sql: str) -> None:
    build = {"sandbox": _via_sandbox, "python": _via_python}[way]
    before: list[float] = []
    text, total_rows, seconds, elsewhere_mb = build(sql, lambda: before.append(_reset_peak()))
    growth = max(0.0, _peak_mb() - before[0]) + elsewhere_mb
    print(json.dumps({"way": way, "rows": total_rows, "seconds": round(seconds, 4),
                      "peak_growth_mb": round(growth, 1),
                      "head": text.splitlines()[0], "text_chars": len(text)}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
