"""The DuckDB queries wrapped around a model's query: what leaves DuckDB, and the summary.

Both wrap the guarded statement as a subquery whose columns are renamed by position
(``c0, c1, ...``), so duplicate or odd names cannot break them.

- ``bounded_rows_sql`` is the only query whose rows reach Python. DuckDB cuts the
  result to a row limit and every cell to what the tool-result text can show:
  strings to ``MAX_CELL_CHARS + 1`` characters, blobs to the bytes whose hex fits,
  and nested or other values that render longer than a cell to their first
  characters as text (smaller ones come as values, so they render exactly as
  before). Numbers, dates, times and the like are small by nature and come as they
  are. A last column ``_size`` estimates each row's rendered size, so the caller
  can stop fetching at a byte budget. Only the first ``MAX_COLUMNS`` columns come.
- ``summary_sql`` counts every row and computes, per numeric-looking column, the
  count, sum, min, max and average over the whole result (see ``worker/query_result.py``).

Pure: builds SQL text and decodes rows; no database access.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from worker.query_result import MAX_CELL_CHARS, MAX_COLUMNS, ColumnSummary, CutText

SKIP_SUFFIXES = ("_id", "_pk", "_code")

_NUMERIC_TYPES = frozenset({
    "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT",
    "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT",
    "FLOAT", "DOUBLE",
})
# Summing these in their own type can overflow; DOUBLE is plenty for a summary.
_SUM_AS_DOUBLE = frozenset({"HUGEINT", "UHUGEINT"})
_TEXT_TYPES = frozenset({"VARCHAR"})
# Values of these types render in a few dozen characters at most.
_SMALL_TYPES = _NUMERIC_TYPES | frozenset({
    "BOOLEAN", "DECIMAL", "DATE", "TIME", "TIME_NS", "TIMETZ", "TIME WITH TIME ZONE",
    "TIMESTAMP", "TIMESTAMP_S", "TIMESTAMP_MS", "TIMESTAMP_NS", "TIMESTAMPTZ",
    "TIMESTAMP WITH TIME ZONE", "INTERVAL", "UUID",
})
_SMALL_VALUE_CHARS = 24  # the size estimate of one of those
_STATS_PER_COLUMN = 5  # count, total, min, max, avg
# Hex digits of a blob that fit in a cell after the leading "\x".
_BLOB_BYTES = MAX_CELL_CHARS // 2


@dataclass(frozen=True)
class BoundedQuery:
    """``sql`` and how to read its rows back: ``kinds[i]`` of shown column ``i`` is
    ``"as is"`` (one value) or ``"value or text"`` (two: the value if it renders
    short, else its cut text)."""

    sql: str
    kinds: tuple[str, ...]

    def decode(self, row: Sequence[Any]) -> tuple[tuple, int]:
        """``(values, estimated rendered size)`` of one fetched row."""
        values, position = [], 0
        for kind in self.kinds:
            if kind == "as is":
                values.append(row[position])
                position += 1
            else:
                small, cut = row[position], row[position + 1]
                values.append(small if cut is None else CutText(cut))
                position += 2
        return tuple(values), int(row[position] or 0)


def bounded_rows_sql(inner_sql: str, types: Sequence[str], limit: int) -> BoundedQuery:
    """The query fetching at most ``limit`` rows of ``inner_sql`` (already guarded: one
    SELECT, no trailing ``;`` or comment), each cell cut to what a cell can show; its
    first ``MAX_COLUMNS`` columns only. See the module doc."""
    select, sizes, kinds = [], [], []
    for index, type_name in enumerate(types[:MAX_COLUMNS]):
        col, base = f"c{index}", _base_type(type_name)
        if base in _SMALL_TYPES:
            select.append(col)
            sizes.append(str(_SMALL_VALUE_CHARS))
            kinds.append("as is")
        elif base in _TEXT_TYPES:
            select.append(f"left({col}, {MAX_CELL_CHARS + 1})")
            sizes.append(f"coalesce(length(left({col}, {MAX_CELL_CHARS + 1})), 0)")
            kinds.append("as is")
        elif base == "BLOB":
            select.append(f"{col}[1:{_BLOB_BYTES}]")
            sizes.append(f"coalesce(2 * octet_length({col}[1:{_BLOB_BYTES}]), 0)")
            kinds.append("as is")
        else:  # nested, JSON, ENUM, BIT, BIGNUM... : anything of unknown length
            text = f"CAST({col} AS VARCHAR)"
            short = f"strlen({text}) <= {MAX_CELL_CHARS}"
            select += [f"CASE WHEN {short} THEN {col} END",
                       f"CASE WHEN NOT ({short}) THEN left({text}, {MAX_CELL_CHARS + 1}) END"]
            sizes.append(f"coalesce(least(strlen({text}), {MAX_CELL_CHARS + 1}), 0)")
            kinds.append("value or text")
    select.append(f"{' + '.join(sizes) or '0'} AS _size")
    sql = (f"SELECT {', '.join(select)}\nFROM (\n{inner_sql}\n) AS t({_aliases(len(types))})"
           f"\nLIMIT {int(limit)}")
    return BoundedQuery(sql, tuple(kinds))


def summary_candidates(columns: Sequence[str], types: Sequence[str]) -> list[tuple[int, str, str]]:
    """Return ``(index, name, type)`` of columns that may be summarised.

    Numeric types and VARCHAR qualify by type (whether more than half of the
    values are numeric is only known after ``summary_sql`` has run); BOOLEAN,
    temporal and nested types never do, nor names ending in ``SKIP_SUFFIXES``,
    nor any column past the first ``MAX_COLUMNS``.
    """
    picked = []
    for index, (name, type_name) in enumerate(zip(columns, types, strict=True)):
        base = _base_type(type_name)
        if index >= MAX_COLUMNS or str(name).lower().endswith(SKIP_SUFFIXES):
            continue
        if base in _NUMERIC_TYPES or base == "DECIMAL" or base in _TEXT_TYPES:
            picked.append((index, str(name), base))
    return picked


def summary_sql(inner_sql: str, columns: Sequence[str], types: Sequence[str]) -> str:
    """Return one DuckDB query computing the row count and per-column stats.

    ``inner_sql`` must already have passed ``sql_guard`` (one SELECT, no
    trailing ``;`` or comment). The result is a single row: ``count(*)`` then,
    per candidate column, the count of numeric values, their sum, min, max and
    average; VARCHAR columns are measured through ``TRY_CAST(... AS DOUBLE)``.
    Decode it with ``read_summary``.
    """
    select = ["count(*)"]
    for index, _name, base in summary_candidates(columns, types):
        expr = f"TRY_CAST(c{index} AS DOUBLE)" if base in _TEXT_TYPES else f"c{index}"
        total = f"sum(CAST({expr} AS DOUBLE))" if base in _SUM_AS_DOUBLE else f"sum({expr})"
        select += [f"count({expr})", total, f"min({expr})", f"max({expr})", f"avg({expr})"]
    # The newlines keep a trailing line comment in inner_sql from eating the ")".
    return f"SELECT {', '.join(select)}\nFROM (\n{inner_sql}\n) AS t({_aliases(len(columns))})"


def read_summary(
    columns: Sequence[str], types: Sequence[str], row: Sequence[Any]
) -> tuple[int, list[ColumnSummary]]:
    """Decode the single row of ``summary_sql`` into ``(total_rows, summaries)``.

    Only columns where more than half of all values are numeric are returned,
    in result-column order.
    """
    total_rows = int(row[0])
    summaries = []
    for position, (_index, name, _base) in enumerate(summary_candidates(columns, types)):
        start = 1 + position * _STATS_PER_COLUMN
        count, total, low, high, avg = row[start:start + _STATS_PER_COLUMN]
        if count and count * 2 > total_rows:
            summaries.append(ColumnSummary(name, int(count), total, low, high, avg))
    return total_rows, summaries


def _aliases(count: int) -> str:
    return ", ".join(f"c{index}" for index in range(count))


def _base_type(type_name: str) -> str:
    """``'DECIMAL(18,3)'`` -> ``'DECIMAL'``; other names upper-cased as they are."""
    return str(type_name).split("(", 1)[0].strip().upper()
