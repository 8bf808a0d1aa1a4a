"""Figure 8, dataset imports: the engine's speed on a ~1 GB CSV against DuckDB's own reader,
and the size of the per-dataset system prompt for 5, 50 and 500 tables.

Import: the same generated CSV (10 columns: ids, dates, timestamps, decimals, a
16-value carrier code, a numeric column with ``NA`` for missing values, text) is
loaded alternately, five times each, (a) by DuckDB alone, ``CREATE TABLE AS SELECT * FROM
read_csv(path)`` into a new database file, then CHECKPOINT, and (b) by
``build_version``: the same read with the engine's options, reject bookkeeping, safe
names, the profile of every column and the rename into place. Both use the same
thread count and memory limit (the import settings); the best run of each counts.
The CPU time of each run (all of DuckDB's threads) gives a second row: on a shared
machine it moves far less with other processes' load than wall time does.
The file is generated once into ``var/bench/`` (kept for re-runs, never committed).

Memory during an upload (``bench/dataset_upload_memory.py``): the API's and the import
worker's peak memory while a ~100 MB and the ~1 GB CSV go up through ``POST
/v1/datasets`` and are imported, on a private stack.

Prompt: synthetic tables shaped like real ones (12 columns: ids, two low-cardinality
codes that earn value hints, dates, measures; a description per table and some per
column), rendered by ``build_dataset_prompt`` with the default budget. Tokens are
counted the way the prompt builder budgets them (``worker.jobs.history.estimate_tokens``,
UTF-8 bytes / 3, a deliberate over-estimate); the offline model's ``count_tokens``
rule (bytes / 4) is in the details.
"""
from __future__ import annotations

import datetime as dt
import logging
import re
import shutil
import time
from pathlib import Path

import duckdb

from bench.figures import result, row
from shared.config import VAR_DIR, Settings

logger = logging.getLogger(__name__)

SPEED_TARGET = 0.8
FULL_ROWS = 12_000_000  # ≈ 1.0 GB of CSV
SMOKE_ROWS = 50_000
UPLOAD_ROWS = (1_200_000, FULL_ROWS)  # ≈ 100 MB and ≈ 1 GB
SMOKE_UPLOAD_ROWS = (5_000, SMOKE_ROWS)
ROUNDS = 5
TABLE_COUNTS = (5, 50, 500)
BENCH_DIR = VAR_DIR / "bench"


def run(smoke: bool = False) -> dict:
    settings = Settings()
    rows = SMOKE_ROWS if smoke else FULL_ROWS
    csv = _csv_file(rows)
    work = BENCH_DIR / "dataset_import_work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        timings: dict[str, list[float]] = {"duckdb": [], "engine": []}
        cpu: dict[str, list[float]] = {"duckdb": [], "engine": []}
        for attempt in range(1 if smoke else ROUNDS):
            runs = (("duckdb", _duckdb_alone, (csv, work / f"plain{attempt}.duckdb", settings)),
                    ("engine", _engine, (csv, work, attempt + 1, settings)))
            for side, load, args in runs:
                wall, cpu_s = _timed(load, *args)
                timings[side].append(wall)
                cpu[side].append(cpu_s)
        engine_types = _types(work / "bench" / "v1.duckdb")
        profile_s = _profile_seconds(work / "bench" / "v1.duckdb", settings)
        duckdb_types = _types(work / "plain0.duckdb")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    best_duckdb, best_engine = min(timings["duckdb"]), min(timings["engine"])
    speed = (rows / best_engine) / (rows / best_duckdb)
    cpu_duckdb, cpu_engine = min(cpu["duckdb"]), min(cpu["engine"])
    size_mb = csv.stat().st_size / 2**20
    rows_out = [row("8 dataset import",
                    f"CSV import rows/s ({size_mb:,.0f} MB, {rows:,} rows): engine (read + "
                    "profile + publish) vs DuckDB read_csv into a table",
                    f"{rows / best_engine:,.0f} rows/s", f"{rows / best_duckdb:,.0f} rows/s",
                    speed, f"≥ {SPEED_TARGET:g}", speed >= SPEED_TARGET),
                row("8 dataset import", "the same, in rows per CPU second (all DuckDB threads; "
                    "steadier than wall time on a shared machine)",
                    f"{rows / cpu_engine:,.0f} rows/s", f"{rows / cpu_duckdb:,.0f} rows/s",
                    cpu_duckdb / cpu_engine, f"≥ {SPEED_TARGET:g}",
                    cpu_duckdb / cpu_engine >= SPEED_TARGET)]
    from bench.dataset_upload_memory import measure

    upload_rows, upload = measure([_csv_file(n) for n in (SMOKE_UPLOAD_ROWS if smoke
                                                         else UPLOAD_ROWS)],
                                  settings.import_memory_limit)
    rows_out += upload_rows
    prompts = {}
    for count in TABLE_COUNTS:
        prompts[count] = _prompt_size(count, settings.dataset_prompt_token_budget)
        figures = prompts[count]
        rows_out.append(row("8 dataset import", f"system prompt tokens, {count} tables "
                            f"({figures['shape']})", f"{figures['tokens']:,}", "", None,
                            f"≤ {figures['budget']:,} (the budget)",
                            figures["tokens"] <= figures["budget"]))
    return result("dataset_import", smoke, rows_out, csv_bytes=csv.stat().st_size, csv_rows=rows,
                  seconds={k: [round(s, 2) for s in v] for k, v in timings.items()},
                  cpu_seconds={k: [round(s, 2) for s in v] for k, v in cpu.items()},
                  profile_alone_s=round(profile_s, 2), threads=settings.import_threads,
                  memory_limit=settings.import_memory_limit,
                  column_types={"engine": engine_types, "duckdb_defaults": duckdb_types},
                  prompts=prompts, upload_memory=upload)


def markdown(outcome: dict) -> str:
    details = outcome["details"]
    types = details["column_types"]
    differing = {c: (types["duckdb_defaults"].get(c), t) for c, t in types["engine"].items()
                 if types["duckdb_defaults"].get(c) != t}
    upload = details.get("upload_memory")
    lines = []
    if upload:
        lines.append("Upload + import through the HTTP API (Pss in MB; idle = just before the "
                     f"upload; load average before {upload['load_before']}, after "
                     f"{upload['load_after']}, on {upload['cpus']} CPUs):\n")
        lines.append("| file | import memory limit | rows | upload s | import s | API idle "
                     "| API peak | worker idle | worker peak |\n"
                     "|---|---|---|---|---|---|---|---|---|")
        lines += [f"| {r['file_mb']:,.0f} MB | {r.get('memory_limit', '')} | {r['rows']:,} "
                  f"| {r['upload_s']} | {r['import_s']} | {r['api_idle_mb']} "
                  f"| {r['api_peak_mb']} | {r['worker_idle_mb']} | {r['worker_peak_mb']} |"
                  for r in upload["runs"]]
        lines.append("")
    lines += ["Column types where DuckDB's defaults and the engine differ "
             "(defaults → engine): " + (", ".join(f"`{c}` {a} → {b}" for c, (a, b)
                                                 in sorted(differing.items())) or "none") + "."]
    return "\n".join(lines)


def _csv_file(rows: int) -> Path:
    """The benchmark CSV of ``rows`` rows, generated once by DuckDB and reused."""
    path = BENCH_DIR / f"dataset_import_{rows}.csv"
    if path.exists():
        return path
    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial.csv")
    con = duckdb.connect()
    try:
        con.execute(f"""
            COPY (SELECT
                i AS order_id,
                i % 50000 AS customer_id,
                DATE '2023-01-01' + CAST(i % 730 AS INTEGER) AS order_date,
                TIMESTAMP '2023-01-01 00:00:00' + to_seconds(CAST(i * 7 % 63072000 AS BIGINT))
                    AS ordered_at,
                ['9E','AA','AS','B6','DL','EV','F9','FL','HA','MQ','OO','UA','US','VX','WN',
                 'YV'][1 + i % 16] AS carrier,
                CAST(round((i % 100000) / 7.0, 2) AS DECIMAL(10, 2)) AS amount,
                CASE WHEN i % 23 = 0 THEN 'NA' ELSE CAST(i % 1000 AS VARCHAR) END AS quantity,
                (i % 3 = 0) AS express,
                ['standard', 'priority', 'economy'][1 + i % 3] AS service,
                'note ' || CAST(i % 99991 AS VARCHAR) AS note
            FROM range({rows}) t(i)) TO '{partial}' (HEADER)""")
    finally:
        con.close()
    partial.rename(path)
    return path


def _timed(load, *args) -> tuple[float, float]:
    """Wall and CPU seconds (this process, every thread) of ``load(*args)``."""
    wall, cpu = time.perf_counter(), time.process_time()
    load(*args)
    return time.perf_counter() - wall, time.process_time() - cpu


def _duckdb_alone(csv: Path, target: Path, settings: Settings) -> None:
    con = duckdb.connect(str(target), config={"threads": settings.import_threads,
                                              "memory_limit": settings.import_memory_limit})
    try:
        con.execute(f"CREATE TABLE orders AS SELECT * FROM read_csv('{csv}')")
        con.execute("CHECKPOINT")
    finally:
        con.close()


def _engine(csv: Path, work: Path, version: int, settings: Settings) -> None:
    from engine.datasets import FileSource, build_version

    build_version([FileSource(csv, "orders.csv")], work, "bench", version,
                  threads=settings.import_threads, memory_limit=settings.import_memory_limit)


def _profile_seconds(path: Path, settings: Settings) -> float:
    """The profile's share of an engine run, timed again on its own."""
    from engine.datasets import profile_tables

    con = duckdb.connect(str(path), read_only=True,
                         config={"threads": settings.import_threads,
                                 "memory_limit": settings.import_memory_limit})
    try:
        started = time.perf_counter()
        profile_tables(con)
        return time.perf_counter() - started
    finally:
        con.close()


def _types(path: Path) -> dict[str, str]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return dict(con.execute("SELECT column_name, data_type FROM duckdb_columns() "
                                "WHERE table_name = 'orders' ORDER BY column_index").fetchall())
    finally:
        con.close()


def _prompt_size(count: int, budget: int) -> dict:
    from engine.datasets import Annotations, ColumnProfile, TableProfile, TopValue
    from sunrise.fake_llm.token_estimate import text_tokens
    from worker.datasets.prompt import build_dataset_prompt
    from worker.jobs.history import estimate_tokens

    codes = tuple(TopValue(code, 100 - n) for n, code in enumerate(("open", "paid", "void")))
    regions = tuple(TopValue(code, 50 - n) for n, code in enumerate(("north", "south", "east",
                                                                     "west")))
    tables, notes = [], {}
    for n in range(count):
        name = f"entity_{n:03d}"
        columns = (ColumnProfile("id", "BIGINT", 0.0, 10_000),
                   ColumnProfile(f"parent_{n % 7}_id", "BIGINT", 0.0, 900),
                   ColumnProfile("status", "VARCHAR", 0.0, 3, top_values=codes),
                   ColumnProfile("region", "VARCHAR", 0.1, 4, top_values=regions),
                   ColumnProfile("created_at", "TIMESTAMP", 0.0, 9_000),
                   ColumnProfile("updated_on", "DATE", 0.2, 700),
                   *(ColumnProfile(f"measure_{i}", "DECIMAL(12,2)", 0.05, 5_000) for i in range(4)),
                   ColumnProfile("label", "VARCHAR", 0.0, 8_000),
                   ColumnProfile("is_active", "BOOLEAN", 0.0, 2))
        tables.append(TableProfile(name, 1_000 * (n + 1), columns))
        notes[name] = {"description": f"One row per {name.replace('_', ' ')} record, kept "
                                      "by the operations team.",
                       "columns": {"measure_0": "Amount in euros, VAT included."}}
    annotations = Annotations(description="Synthetic operations data.", tables=notes,
                              glossary={"active": "is_active is true"})
    prompt = build_dataset_prompt(tables, dt.date(2026, 1, 1), annotations, token_budget=budget)
    return {"tokens": estimate_tokens(prompt), "offline_model_tokens": text_tokens(prompt),
            "budget": budget, "shape": _shape(prompt, count), "chars": len(prompt)}


def _shape(prompt: str, count: int) -> str:
    """Which of build_dataset_prompt's forms fitted the budget."""
    if "CREATE TABLE" in prompt:
        return "every column" + ("" if "values '" in prompt else ", no value hints")
    listed = len(re.findall(r"^- entity_\d+: ", prompt, flags=re.MULTILINE))
    described = ("names and rows" if "rows. One row per" not in prompt
                 else "descriptions cut short" if "rows. One row per" in prompt and "...\n" in prompt
                 else "described")
    return f"{listed} of {count} tables listed ({described}), columns looked up"
