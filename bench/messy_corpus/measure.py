"""Import every file of the corpus through the real import engine and compare with what a
person expects (``manifest.yaml``) and with what the values really are (the truth
``build`` returns).

A column is **as expected** when its DuckDB type is of the kind the manifest names
(DECIMAL/DOUBLE/any integer → number; integer types and DECIMAL(p,0) → integer; DATE;
TIMESTAMP, with or without time zone → timestamp; VARCHAR → text; BOOLEAN; a list type
→ list) and its values are the real ones: as many present as the file holds (a value
turned NULL is lost), numbers summing to the true sum (a percent may read 45.3 or
0.453), dates and times with the true first and last. An ``ambiguous`` column is as
expected when a warning of its table names it, whether it was converted or kept text.

A column is **silently left as text** when a person expects a number, date or time
and the table has it as text (or lacks it) while none of the table's import warnings
(``TableProfile.warnings``) names it.

Each file is imported on its own (``build_version`` with the default limits), so a
file that fails costs only its own columns; a failure is a miss, not a silent one.
"""
from __future__ import annotations

import datetime as dt
import re
import shutil
import tempfile
import time
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import yaml

from engine.datasets import FileSource, TableProfile, build_version
from engine.datasets.naming import quote_ident
from shared.errors import ImportFailed

MANIFEST = Path(__file__).with_name("manifest.yaml")
SHARE_TARGET = 0.95
_NUMERIC = ("number", "integer", "date", "timestamp")
_INTEGERS = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
             "UINTEGER", "UBIGINT", "UHUGEINT")
_DECIMAL = re.compile(r"DECIMAL\(\d+,(\d+)\)")


@dataclass(frozen=True)
class Expected:
    type: str
    missing_ok: bool = False
    percent: bool = False
    ambiguous: bool = False

    @classmethod
    def parse(cls, entry: str | dict) -> Expected:
        return cls(entry) if isinstance(entry, str) else cls(**entry)


@dataclass(frozen=True)
class Miss:
    """A column not as a person expects it, and why."""

    file: str
    table: str
    column: str
    expected: str
    got: str
    reason: str
    silent: bool = False

    def __str__(self) -> str:
        flag = " [silently text]" if self.silent else ""
        return (f"{self.file} {self.table}.{self.column}: expected {self.expected}, got "
                f"{self.got}: {self.reason}{flag}")


@dataclass
class CorpusFigures:
    """What one measurement of the corpus found."""

    files: int = 0
    columns: int = 0
    as_expected: int = 0
    misses: list[Miss] = field(default_factory=list)
    row_misses: list[str] = field(default_factory=list)
    failed_files: dict[str, str] = field(default_factory=dict)
    import_seconds: dict[str, float] = field(default_factory=dict)

    @property
    def share(self) -> float:
        return self.as_expected / self.columns if self.columns else 0.0

    @property
    def silent(self) -> list[Miss]:
        return [m for m in self.misses if m.silent]

    def summary(self) -> str:
        """Every figure and miss, one per line (what a failing test prints)."""
        lines = [f"{self.as_expected} of {self.columns} columns of {self.files} files as a "
                 f"person expects ({self.share:.1%}); {len(self.silent)} silently left as "
                 f"text; {len(self.row_misses)} tables with other rows than a person counts"]
        lines += [f"  miss: {m}" for m in self.misses]
        lines += [f"  rows: {r}" for r in self.row_misses]
        lines += [f"  failed: {f}: {e}" for f, e in sorted(self.failed_files.items())]
        return "\n".join(lines)


def load_manifest(path: Path = MANIFEST) -> dict[str, dict[str, dict]]:
    """``{file: {table: {"rows": n, "columns": {column: Expected}}}}``."""
    raw = yaml.safe_load(path.read_text())
    return {file: {table: {"rows": spec["rows"],
                           "columns": {c: Expected.parse(e) for c, e in spec["columns"].items()}}
                   for table, spec in tables.items()}
            for file, tables in raw.items()}


def kind_of(duckdb_type: str) -> str:
    """The manifest's word for a DuckDB column type."""
    if duckdb_type in _INTEGERS:
        return "integer"
    if match := _DECIMAL.fullmatch(duckdb_type):
        return "integer" if match[1] == "0" else "number"
    if duckdb_type in ("DOUBLE", "FLOAT", "REAL"):
        return "number"
    if duckdb_type.startswith("TIMESTAMP"):
        return "timestamp"
    if duckdb_type.endswith("[]"):
        return "list"
    return {"DATE": "date", "VARCHAR": "text", "BOOLEAN": "boolean"}.get(
        duckdb_type, duckdb_type.lower())


def fits(expected: str, kind: str) -> bool:
    return kind in ("number", "integer") if expected == "number" else kind == expected


def measure_corpus(folder: Path, truth: dict[str, dict], manifest: dict | None = None,
                   work: Path | None = None) -> CorpusFigures:
    """Import each file of ``folder`` (as ``build`` wrote it, with its ``truth``) and compare
    with ``manifest`` (default: ``manifest.yaml``). Versions are built under ``work``
    (default: a temporary folder), removed afterwards. Raises ``ValueError`` when the
    corpus and the manifest do not name the same files and columns."""
    manifest = load_manifest() if manifest is None else manifest
    _check_agreement(manifest, truth)
    own = work is None
    work = Path(tempfile.mkdtemp(prefix="messy-corpus-")) if own else work
    figures = CorpusFigures(files=len(manifest))
    try:
        for index, (file, tables) in enumerate(sorted(manifest.items())):
            _measure_file(folder / file, f"corpus{index}", tables, truth[file], work, figures)
    finally:
        if own:
            shutil.rmtree(work, ignore_errors=True)
    return figures


def _measure_file(path: Path, dataset_id: str, tables: dict, truth: dict, work: Path,
                  figures: CorpusFigures) -> None:
    file = path.name
    started = time.perf_counter()
    try:
        built = build_version([FileSource(path)], work, dataset_id, 1)
    except ImportFailed as exc:
        figures.failed_files[file] = str(exc)
        for table, spec in tables.items():
            for column, expected in spec["columns"].items():
                figures.columns += 1
                figures.misses.append(Miss(file, table, column, expected.type, "nothing",
                                           f"the import failed: {exc}"))
        return
    figures.import_seconds[file] = round(time.perf_counter() - started, 3)
    profiles = {t.name: t for t in built.tables}
    con = duckdb.connect(str(built.path), read_only=True)
    try:
        for table, spec in tables.items():
            profile = profiles.get(table)
            if profile is None:
                figures.row_misses.append(f"{file}: no table {table} (made: "
                                          f"{', '.join(sorted(profiles)) or 'none'})")
            elif profile.rows != spec["rows"]:
                figures.row_misses.append(f"{file} {table}: {profile.rows} rows, a person "
                                          f"counts {spec['rows']}")
            for column, expected in spec["columns"].items():
                figures.columns += 1
                miss = _column(con, file, table, column, expected, profile,
                               truth.get(table, {}).get(column))
                if miss is None:
                    figures.as_expected += 1
                else:
                    figures.misses.append(miss)
    finally:
        con.close()


def _column(con, file: str, table: str, column: str, expected: Expected,
            profile: TableProfile | None, truth: dict | None) -> Miss | None:
    """None when ``column`` is as expected, else the miss."""
    columns = {c.name: c for c in profile.columns} if profile else {}
    warned = profile is not None and _named(column, profile.warnings)
    found = columns.get(column)
    if found is None:
        got, reason = "nothing", (f"no such column (the table has: {', '.join(columns)})"
                                  if profile else "no such table")
        return Miss(file, table, column, expected.type, got, reason,
                    silent=profile is not None and expected.type in _NUMERIC and not warned)
    kind = kind_of(found.type)
    if expected.ambiguous:
        if not warned:
            return Miss(file, table, column, expected.type, found.type,
                        "ambiguous, and no warning names it", silent=kind == "text")
        if kind == "text":
            return None
    if not fits(expected.type, kind):
        silent = expected.type in _NUMERIC and kind == "text" and not warned
        reason = "left as text" + (" (a warning names it)" if warned else "") \
            if kind == "text" else "another type"
        return Miss(file, table, column, expected.type, found.type, reason, silent=silent)
    problem = _values(con, table, column, kind, expected, truth, found.null_fraction)
    return None if problem is None else Miss(file, table, column, expected.type, found.type,
                                             problem)


def _values(con, table: str, column: str, kind: str, expected: Expected, truth: dict | None,
            null_fraction: float) -> str | None:
    """What is wrong with the column's values, if anything."""
    if truth is None:
        if not expected.missing_ok and null_fraction > 0:
            return f"{null_fraction:.1%} of its values are NULL, and none is missing"
        return None
    name = quote_ident(column)
    summary = "sum" if kind in ("number", "integer") else "min"
    (count, first, last), = con.execute(
        f"SELECT count({name}), {summary}({name}), max({name}) "
        f"FROM {quote_ident(table)}").fetchall()
    if count != truth["count"]:
        return f"{count} values present, the file holds {truth['count']}"
    if "sum" in truth and kind in ("number", "integer"):
        real = truth["sum"]
        readings = (real, real * 100) if expected.percent else (real,)
        if not any(_close(float(first), r) for r in readings):
            return f"its values sum to {float(first):,.4f}, the file's to {real:,.4f}"
    if "min" in truth and kind in ("date", "timestamp") and not expected.ambiguous:
        got = (_moment(first), _moment(last))
        want = (_moment(truth["min"]), _moment(truth["max"]))
        if any(abs((g - w).total_seconds()) >= 1 for g, w in zip(got, want)):
            return f"runs {got[0]} to {got[1]}, the file's from {want[0]} to {want[1]}"
    return None


def _named(column: str, warnings: tuple[str, ...]) -> bool:
    """Whether a warning names ``column``, by its safe name or by the header it came from
    ("Order Date", "Stück" name ``order_date``, ``stuck``)."""
    wanted = f"_{column.strip('_')}_"
    return any(wanted in f"_{_words(w)}_" for w in warnings)


def _words(text: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "_", ascii_text.lower()).strip("_")


def _close(got: float, want: float) -> bool:
    return abs(got - want) <= max(1e-6 * abs(want), 0.005)


def _moment(value) -> dt.datetime:
    if isinstance(value, str):
        value = dt.datetime.fromisoformat(value)
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None)
    return dt.datetime.combine(value, dt.time())


def _check_agreement(manifest: dict, truth: dict) -> None:
    if set(manifest) != set(truth):
        raise ValueError(f"the manifest and the corpus differ: only in the manifest "
                         f"{sorted(set(manifest) - set(truth))}, only in the corpus "
                         f"{sorted(set(truth) - set(manifest))}")
    for file, tables in truth.items():
        for table, columns in tables.items():
            unknown = set(columns) - set(manifest[file].get(table, {}).get("columns", {}))
            if unknown:
                raise ValueError(f"{file}: the manifest has no {table}.{sorted(unknown)}")
