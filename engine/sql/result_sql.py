"""The DuckDB queries wrapped around a model's query: what leaves DuckDB, and the summary.

Both wrap the guarded statement as a subquery whose columns are renamed by position
(``c0, c1, ...``), so duplicate or odd names cannot break them.

- ``bounded_rows_sql`` is the only query whose rows reach Python. DuckDB cuts the
  result to a row limit and every cell to what the tool-result text can show:
  strings to ``MAX_CELL_CHARS + 1`` characters, blobs to the bytes whose hex fits,
  and nested or other values that render longer than a cell to their first
  characters as text (smaller ones come as values, so they render exactly as
  before). Numbers, dates, times and the like are small by nature and come as they
  are. Each row's rendered size is estimated, so the caller can stop fetching at a
  byte budget: from the fetched values themselves when every shown column is a
  number-like value, text or a blob (the estimate is their length, which DuckDB would
  compute to the same number), else by DuckDB in a last column ``_size``. Only the
  first ``MAX_COLUMNS`` columns come.
- ``summary_sql`` counts every row and computes, per numeric-looking column, the
  count, sum, min, max and average over the whole result (see ``engine/sql/query_result.py``).

Pure: builds SQL text and decodes rows; no database access.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.sql.query_result import MAX_CELL_CHARS, MAX_COLUMNS, ColumnSummary, CutText

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
# How many byte budgets of rendered text the rows listed by ``one_pass_sql`` may reach
# before the list is cut at the budget inside DuckDB (32 MB at the default 2 MB).
LIST_BUDGETS = 16
# Hex digits of a blob that fit in a cell after the leading "\x".
_BLOB_BYTES = MAX_CELL_CHARS // 2
# A row's size worked out from its values: (the small values' fixed size, positions of
# text columns, positions of blob columns).
_Measured = tuple[int, tuple[int, ...], tuple[int, ...]]


@dataclass(frozen=True)
class BoundedQuery:
    """``sql`` and how to read its rows back: ``kinds[i]`` of shown column ``i`` is
    ``"as is"`` (one value) or ``"value or text"`` (two: the value if it renders
    short, else its cut text). With ``measured`` set, the rows carry no size column:
    it is ``(the small values' fixed size, positions of text columns, positions of
    blob columns)``, from which ``decode`` estimates a row's size as DuckDB's size
    expression would (``length`` of a text, twice the bytes of a blob, 0 for NULL)."""

    sql: str
    kinds: tuple[str, ...]
    measured: _Measured | None = None

    def decode(self, row: Sequence[Any]) -> tuple[tuple, int]:
        """``(values, estimated rendered size)`` of one fetched row."""
        if self.measured is not None:
            size, texts, blobs = self.measured
            for position in texts:
                if (text := row[position]) is not None:
                    size += len(text)
            for position in blobs:
                if (blob := row[position]) is not None:
                    size += 2 * len(blob)
            return tuple(row), size
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
    select, size, kinds, _widest, measured = _bounded_select(types)
    # Sized from the values when it can be: DuckDB's size expression costs about 0.15 ms
    # a query, however few its rows.
    size_column = "" if measured is not None else f", {size} AS _size"
    sql = (f"SELECT {', '.join(select)}{size_column}\nFROM (\n{inner_sql}\n) AS "
           f"t({_aliases(len(types))})\nLIMIT {int(limit)}")
    return BoundedQuery(sql, kinds, measured)


def one_pass_sql(inner_sql: str, columns: Sequence[str], types: Sequence[str], limit: int,
                 max_bytes: int) -> BoundedQuery:
    """One query running ``inner_sql`` once for both the rows and the summary.

    Its single row is ``summary_sql``'s (read it with ``read_summary``) plus a last
    value: the list of the first ``limit`` rows ``bounded_rows_sql`` would fetch, in the
    same order, each a tuple that ``decode`` reads (sized as that query's rows are); the
    caller stops at ``max_bytes`` as it does fetching them. ``row_number() OVER ()``
    numbers the rows in the order the statement gives them (a streaming window: nothing
    is held), and ``list(... ORDER BY _n)`` keeps that order whatever threads the
    aggregate runs on. A row past ``limit`` is counted and summarised but never built
    (``CASE``). When ``limit`` rows could render to more than ``LIST_BUDGETS`` times
    ``max_bytes``, the list also stops at the row whose running size passes
    ``max_bytes`` (a second streaming window), so it stays small however wide the rows;
    otherwise that window, about 1 ms of planning, is left out.
    """
    select, size, kinds, widest, measured = _bounded_select(types)
    first = f"_n <= {int(limit)}"
    kept, source = first, (f"SELECT *, row_number() OVER () AS _n\n"
                           f"FROM (\n{inner_sql}\n) AS t({_aliases(len(types))})")
    if int(limit) * widest > LIST_BUDGETS * int(max_bytes):
        kept = f"{first} AND (_n = 1 OR _upto <= {int(max_bytes)})"
        source = (f"SELECT *, sum(CASE WHEN {first} THEN {size} END) "
                  f"OVER (ROWS UNBOUNDED PRECEDING) AS _upto\nFROM ({source})")
        measured = None  # the size is computed in DuckDB anyway
    listed = ", ".join(select) if measured is not None else f"{', '.join(select)}, {size}"
    sql = (f"SELECT {', '.join(_summary_select(columns, types))}, "
           f"list(CASE WHEN {first} THEN row({listed}) END ORDER BY _n) "
           f"FILTER (WHERE {kept})\nFROM ({source})")
    return BoundedQuery(sql, kinds, measured)


def _bounded_select(types: Sequence[str]) -> tuple[list[str], str, tuple[str, ...], int,
                                                  _Measured | None]:
    """``(select list, rendered size expression, kinds, largest size, measured)`` of the
    bounded cells of the first ``MAX_COLUMNS`` columns ``c0, c1, ...`` (see the module
    doc; ``measured`` as ``BoundedQuery`` takes it, ``None`` if a cell needs DuckDB to
    size it)."""
    select, sizes, kinds, widest = [], [], [], 0
    fixed, texts, blobs, by_value = 0, [], [], True
    for index, type_name in enumerate(types[:MAX_COLUMNS]):
        col, base = f"c{index}", _base_type(type_name)
        if base in _SMALL_TYPES:
            select.append(col)
            sizes.append(str(_SMALL_VALUE_CHARS))
            kinds.append("as is")
            widest += _SMALL_VALUE_CHARS
            fixed += _SMALL_VALUE_CHARS
        elif base in _TEXT_TYPES:
            select.append(f"left({col}, {MAX_CELL_CHARS + 1})")
            sizes.append(f"coalesce(length(left({col}, {MAX_CELL_CHARS + 1})), 0)")
            kinds.append("as is")
            widest += MAX_CELL_CHARS + 1
            texts.append(index)
        elif base == "BLOB":
            select.append(f"{col}[1:{_BLOB_BYTES}]")
            sizes.append(f"coalesce(2 * octet_length({col}[1:{_BLOB_BYTES}]), 0)")
            kinds.append("as is")
            widest += 2 * _BLOB_BYTES
            blobs.append(index)
        else:  # nested, JSON, ENUM, BIT, BIGNUM... : anything of unknown length
            text = f"CAST({col} AS VARCHAR)"
            short = f"strlen({text}) <= {MAX_CELL_CHARS}"
            select += [f"CASE WHEN {short} THEN {col} END",
                       f"CASE WHEN NOT ({short}) THEN left({text}, {MAX_CELL_CHARS + 1}) END"]
            sizes.append(f"coalesce(least(strlen({text}), {MAX_CELL_CHARS + 1}), 0)")
            kinds.append("value or text")
            widest += MAX_CELL_CHARS + 1
            by_value = False
    measured = (fixed, tuple(texts), tuple(blobs)) if by_value else None
    return select, " + ".join(sizes) or "0", tuple(kinds), widest, measured


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
    # The newlines keep a trailing line comment in inner_sql from eating the ")".
    return (f"SELECT {', '.join(_summary_select(columns, types))}\nFROM (\n{inner_sql}\n) AS "
            f"t({_aliases(len(columns))})")


def _summary_select(columns: Sequence[str], types: Sequence[str]) -> list[str]:
    """``count(*)``, then count, sum, min, max and average of each summary candidate."""
    select = ["count(*)"]
    for index, _name, base in summary_candidates(columns, types):
        expr = f"TRY_CAST(c{index} AS DOUBLE)" if base in _TEXT_TYPES else f"c{index}"
        total = f"sum(CAST({expr} AS DOUBLE))" if base in _SUM_AS_DOUBLE else f"sum({expr})"
        select += [f"count({expr})", total, f"min({expr})", f"max({expr})", f"avg({expr})"]
    return select


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
