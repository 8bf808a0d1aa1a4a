"""The profile of a dataset's tables, computed inside DuckDB.

Per table: ``rows``. Per column: ``name``, ``type`` (as ``duckdb_columns()`` spells it,
so a prompt built from a profile matches one built from the file), ``null_fraction``,
``distinct``, ``min``, ``max`` and ``top_values`` (``[{"value", "count"}]``, most
frequent first, then by value).

Cost: two scans per table (one more per 60 low-cardinality columns past the first 60). The first counts rows, non-null values,
``min``/``max`` and an approximate distinct count (HyperLogLog, ``approx_count_distinct``)
of every column. The second, with GROUPING SETS, counts every value of the columns that
have at most ``LOW_CARDINALITY`` distinct values: their ``distinct`` is then exact and
their ``top_values`` holds up to ``TOP_VALUES`` values. Above that, ``distinct`` is the
estimate (within a few per cent) and ``top_values`` is empty.

``min``/``max``/``top_values`` are given for numbers, text, booleans, dates and times
(as JSON-ready values: ISO text for dates and times, floats for decimals); other types
(blobs, lists, structs) only get the counts.

What the import learnt about the data on the way (``ImportNotes``, collected by the
import target) rides along: per column the ``original`` form of converted values ("text
like `$1,017.87`"), the ``format`` they were read with ("decimal_comma", "%d/%m/%Y"),
a ``note`` (the import's own description of the column) and, for a text column that
looks like numbers or dates but was not converted, a ``suggestion``
(``{"type", "format", "label"}``: the re-type a person can apply in one click); per table a ``note`` (rows
left out, such as totals) and the ``warnings`` a person should read (what stayed text,
and why). They are left out of ``as_dict`` when empty, so a version stored before they
existed reads back the same.
"""
from __future__ import annotations

import datetime as dt
import decimal
import math
import uuid
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import duckdb

from engine.datasets.naming import quote_ident

LOW_CARDINALITY = 1000
TOP_VALUES = 25
_GROUPING_BATCH = 60
_COMPARABLE = ("BOOLEAN", "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT",
               "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT", "FLOAT", "DOUBLE", "DECIMAL",
               "VARCHAR", "DATE", "TIME", "TIMESTAMP", "UUID", "INTERVAL")


@dataclass(frozen=True)
class TopValue:
    value: Any
    count: int


@dataclass(frozen=True)
class ColumnProfile:
    name: str
    type: str
    null_fraction: float
    distinct: int
    min: Any = None
    max: Any = None
    top_values: tuple[TopValue, ...] = ()
    original: str | None = None
    format: str | None = None
    note: str | None = None
    suggestion: dict | None = None

    @property
    def text(self) -> bool:
        return self.type == "VARCHAR"

    @property
    def values_complete(self) -> bool:
        """Whether ``top_values`` lists every distinct non-null value."""
        return 0 < self.distinct == len(self.top_values)


@dataclass(frozen=True)
class TableProfile:
    name: str
    rows: int
    columns: tuple[ColumnProfile, ...] = field(default_factory=tuple)
    note: str | None = None
    warnings: tuple[str, ...] = ()

    def as_dict(self) -> dict:
        """JSON-ready, in the API's shape (without descriptions, which are annotations);
        the import's notes only where there are some."""
        data = asdict(self)
        for column in data["columns"]:
            for key in _COLUMN_NOTES:
                if column[key] is None:
                    del column[key]
        if self.note is None:
            del data["note"]
        if self.warnings:
            data["warnings"] = list(self.warnings)
        else:
            del data["warnings"]
        return data

    @classmethod
    def from_dict(cls, data: dict) -> TableProfile:
        """The inverse of ``as_dict`` (e.g. a profile stored as JSON); ignores extra keys."""
        columns = tuple(
            ColumnProfile(c["name"], c["type"], c["null_fraction"], c["distinct"], c.get("min"),
                          c.get("max"), tuple(TopValue(t["value"], t["count"])
                                              for t in c.get("top_values") or ()),
                          *(c.get(key) for key in _COLUMN_NOTES))
            for c in data["columns"])
        return cls(data["name"], data["rows"], columns, data.get("note"),
                   tuple(data.get("warnings") or ()))

    def with_notes(self, notes: ImportNotes | None) -> TableProfile:
        """This profile with what the import noted about its table and columns."""
        if notes is None:
            return self
        columns = tuple(replace(c, **notes.columns[c.name]) if c.name in notes.columns else c
                        for c in self.columns)
        return replace(self, columns=columns, note=notes.note or self.note,
                       warnings=self.warnings + tuple(notes.warnings))


_COLUMN_NOTES = ("original", "format", "note", "suggestion")


@dataclass
class ImportNotes:
    """What an import noted about one table: per column ``{"original", "format", "note",
    "suggestion"}`` (any of them), the table's ``note`` and its ``warnings``, in the order raised."""

    columns: dict[str, dict[str, Any]] = field(default_factory=dict)
    note: str | None = None
    warnings: list[str] = field(default_factory=list)

    def rename_column(self, old: str, new: str) -> None:
        if old in self.columns:
            self.columns[new] = self.columns.pop(old)


def profile_tables(con: duckdb.DuckDBPyConnection, tables: list[str] | None = None) -> list[TableProfile]:
    """Profiles of ``tables`` (default: every table in ``main``), sorted by table name."""
    columns: dict[str, list[tuple[str, str]]] = {}
    for table, column, data_type in con.execute(
            "SELECT table_name, column_name, data_type FROM duckdb_columns() "
            "WHERE database_name = current_database() AND schema_name = 'main' AND NOT internal "
            "ORDER BY table_name, column_index").fetchall():
        columns.setdefault(table, []).append((column, data_type))
    names = sorted(tables if tables is not None else columns)
    return [_profile_table(con, name, columns.get(name, [])) for name in names]


def _profile_table(con: duckdb.DuckDBPyConnection, table: str,
                   columns: list[tuple[str, str]]) -> TableProfile:
    source = quote_ident(table)
    parts = ["count(*)"]
    for name, data_type in columns:
        ident = quote_ident(name)
        parts += [f"count({ident})", f"approx_count_distinct({ident})"]
        parts += ([f"min({ident})", f"max({ident})"] if _comparable(data_type)
                  else ["NULL", "NULL"])
    row = con.execute(f"SELECT {', '.join(parts)} FROM {source}").fetchone()
    rows = int(row[0])
    stats = {}
    for index, (name, _) in enumerate(columns):
        non_null, approx, low, high = row[1 + 4 * index: 5 + 4 * index]
        stats[name] = (int(non_null), int(approx or 0), low, high)
    low_cardinality = [name for name, data_type in columns
                       if _comparable(data_type) and 0 < stats[name][1] <= LOW_CARDINALITY]
    counted = _value_counts(con, table, low_cardinality)
    profiles = []
    for name, data_type in columns:
        non_null, approx, low, high = stats[name]
        values = counted.get(name)
        distinct = len(values) if values is not None else approx
        top = tuple(TopValue(json_ready(v), n) for v, n in (values or [])[:TOP_VALUES])
        profiles.append(ColumnProfile(
            name, data_type, round(1 - non_null / rows, 4) if rows else 0.0,
            min(distinct, non_null), json_ready(low), json_ready(high), top))
    return TableProfile(table, rows, tuple(profiles))


def _value_counts(con: duckdb.DuckDBPyConnection, table: str,
                  columns: list[str]) -> dict[str, list[tuple[Any, int]]]:
    """Every non-null value of each column with its count, most frequent first (one scan
    per ``_GROUPING_BATCH`` columns: GROUPING_ID is a 64-bit mask)."""
    counted: dict[str, list[tuple[Any, int]]] = {}
    for start in range(0, len(columns), _GROUPING_BATCH):
        counted.update(_count_values(con, table, columns[start:start + _GROUPING_BATCH]))
    return counted


def _count_values(con: duckdb.DuckDBPyConnection, table: str,
                  columns: list[str]) -> dict[str, list[tuple[Any, int]]]:
    idents = [quote_ident(c) for c in columns]
    sets = ", ".join(f"({ident})" for ident in idents)
    # Sorted by DuckDB, most frequent first and then by value: each row has one column's
    # value (the others NULL), so ordering by every column orders each by its own.
    rows = con.execute(
        f"SELECT GROUPING_ID({', '.join(idents)}), {', '.join(idents)}, count(*) "
        f"FROM {quote_ident(table)} GROUP BY GROUPING SETS ({sets}) "
        f"ORDER BY count(*) DESC, {', '.join(idents)}").fetchall()
    width = len(columns)
    full = (1 << width) - 1
    counted: dict[str, list[tuple[Any, int]]] = {c: [] for c in columns}
    for row in rows:
        grouping, values, count = row[0], row[1:1 + width], row[-1]
        # GROUPING_ID sets a bit for every column NOT grouped; the first column is the high
        # bit, so the one bit left clear is the grouped column's.
        index = width - (full ^ grouping).bit_length()
        if values[index] is not None:
            counted[columns[index]].append((values[index], int(count)))
    return counted


def _comparable(data_type: str) -> bool:
    return data_type.split("(")[0].strip() in _COMPARABLE or data_type.startswith(
        ("TIMESTAMP", "DECIMAL"))


def json_ready(value: Any) -> Any:
    """``value`` as JSON can hold it (see the module docstring)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, (dt.timedelta, uuid.UUID)):
        return str(value)
    return None
