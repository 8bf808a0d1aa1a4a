"""A live result's rows and summary, made the DuckDB sandbox's way.

- ``bounded_row`` cuts one fetched row's cells as ``result_sql.bounded_rows_sql`` does
  inside DuckDB (text to ``MAX_CELL_CHARS + 1`` characters, blobs to the bytes whose hex
  fits a cell, nested values rendering longer than a cell to their first characters as
  ``CutText``) and estimates its rendered size the same way (small values 24, text its
  length, a blob twice its bytes), so the fetch stops at the same byte budget.
- ``take_rows`` keeps a fetched batch within the row cap and the byte budget. A batch of
  plain cells (numbers, dates, text no longer than a cell) that fits whole is sized column
  by column with builtins and kept as fetched; only a batch that needs cutting, or in
  which the budget runs out, goes row by row through ``bounded_row``. Both ways keep
  the same rows with the same values.
- ``local_summary`` computes the summary of a result fetched whole, with
  ``result_sql.summary_sql`` itself on an in-memory DuckDB holding the candidate columns
  (handed over as Arrow arrays built from whole columns): the figures are the sandbox's. One in-memory database per process serves every call,
  each on a cursor of its own (the fetched rows registered on that cursor only):
  opening a fresh DuckDB database per query cost more than the query itself.
- ``engine_summary_sql`` wraps the statement for a summary computed on the engine (a
  result too large to fetch), positional column names as ``result_sql`` uses.

Pure, apart from the in-memory DuckDB of ``local_summary``.
"""
from __future__ import annotations

import datetime as dt
import decimal
import itertools
import json
import operator
import threading
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import duckdb
import pyarrow as pa

from engine.sql.query_result import MAX_CELL_CHARS, MAX_COLUMNS, ColumnSummary, CutText
from engine.sql.result_sql import read_summary, summary_candidates, summary_sql

_BLOB_BYTES = MAX_CELL_CHARS // 2
_SMALL_VALUE_CHARS = 24
_SMALL = (bool, int, float, decimal.Decimal, dt.date, dt.time, dt.timedelta, uuid.UUID)
# The exact types of small values (``_SMALL`` above also admits their subclasses).
_NONES = itertools.repeat(None)
_SMALL_TYPES = frozenset({bool, int, float, decimal.Decimal, dt.date, dt.datetime, dt.time,
                          dt.timedelta, uuid.UUID})
_SUMMARY_DB: duckdb.DuckDBPyConnection | None = None
_SUMMARY_DB_LOCK = threading.Lock()
_ARROW = {"TINYINT": pa.int8(), "SMALLINT": pa.int16(), "INTEGER": pa.int32(),
          "BIGINT": pa.int64(), "UBIGINT": pa.uint64(), "FLOAT": pa.float32(),
          "DOUBLE": pa.float64(), "VARCHAR": pa.string()}


def bounded_row(row: Sequence[Any]) -> tuple[tuple, int]:
    """``(cut values, estimated rendered size)`` of one fetched row (see the module doc)."""
    values, size = [], 0
    for value in row:
        if value is None:
            values.append(None)
        elif isinstance(value, str):
            text = value[:MAX_CELL_CHARS + 1]
            values.append(text)
            size += len(text)
        elif isinstance(value, (bytes, bytearray, memoryview)):
            blob = bytes(value[:_BLOB_BYTES])
            values.append(blob)
            size += 2 * len(blob)
        elif isinstance(value, _SMALL):
            values.append(value)
            size += _SMALL_VALUE_CHARS
        else:  # lists, dicts, anything of unknown length
            text = (json.dumps(value, default=str, ensure_ascii=False)
                    if isinstance(value, (list, tuple, dict)) else str(value))
            values.append(value if len(text) <= MAX_CELL_CHARS
                          else CutText(text[:MAX_CELL_CHARS + 1]))
            size += min(len(text), MAX_CELL_CHARS + 1)
    return tuple(values), size


def take_rows(batch: Sequence[tuple], kept: list[tuple], size: int, *, cap: int,
              max_bytes: int) -> tuple[int, bool]:
    """Append ``batch``'s rows to ``kept``, cut as ``bounded_row`` cuts them (at most
    ``MAX_COLUMNS`` cells), while fewer than ``cap`` rows are kept and their rendered size
    stays within ``max_bytes`` (the first row of a result is kept whatever its size).
    ``size`` is the size so far. Returns ``(size, full)``: the new size (the row left out
    included) and whether a row was left out, i.e. the result is larger than ``kept``."""
    if not batch:
        return size, False
    plain = _plain_size(batch)
    if plain is not None and len(kept) + len(batch) <= cap and size + plain <= max_bytes:
        kept.extend(batch if len(batch[0]) <= MAX_COLUMNS
                    else [row[:MAX_COLUMNS] for row in batch])
        return size + plain, False
    for raw in batch:
        values, row_size = bounded_row(raw[:MAX_COLUMNS])
        size += row_size
        if len(kept) >= cap or (size > max_bytes and kept):
            return size, True
        kept.append(values)
    return size, False


def _plain_size(batch: Sequence[tuple]) -> int | None:
    """The rendered size of ``batch`` (as ``bounded_row`` sums it) when no cell of it
    needs cutting or converting: every column holds only small values, or only text no
    longer than a cell (with NULLs). None otherwise."""
    total = 0
    for column in itertools.islice(zip(*batch, strict=True), MAX_COLUMNS):
        kinds = set(map(type, column))
        kinds.discard(type(None))
        if kinds <= _SMALL_TYPES:
            total += _SMALL_VALUE_CHARS * sum(map(operator.is_not, column, _NONES))
        elif kinds == {str}:
            lengths = list(map(len, filter(None, column)))  # NULL and '' both count 0
            if lengths and max(lengths) > MAX_CELL_CHARS + 1:
                return None
            total += sum(lengths)
        else:
            return None
    return total


def local_summary(columns: Sequence[str], types: Sequence[str],
                  rows: Sequence[tuple]) -> tuple[int, list[ColumnSummary]]:
    """``(total rows, summary)`` of a whole result already fetched, computed by DuckDB
    with the sandbox's own SQL. Raises ``ValueError`` when a value does not fit its
    column's type (the caller then asks the engine)."""
    candidates = summary_candidates(columns, types)
    if not candidates:
        return len(rows), []
    by_column = list(zip(*rows, strict=True)) if rows else [() for _ in columns]
    arrays, names = [], []
    for index, _name, base in candidates:
        arrays.append(_column_array(by_column[index], base, types[index], index))
        names.append(f"c{index}")
    table = pa.Table.from_arrays(arrays, names=names)
    picked = {index for index, _name, _base in candidates}
    inner = "SELECT " + ", ".join(f"c{i}" if i in picked else "NULL"
                                  for i in range(len(columns))) + " FROM fetched"
    con = _summary_db().cursor()
    try:
        con.register("fetched", table)
        row = con.execute(summary_sql(inner, columns, types)).fetchone()
    except duckdb.Error as exc:
        raise ValueError(str(exc)) from None
    finally:
        con.close()
    return read_summary(columns, types, row)


def _column_array(values: Sequence[Any], base: str, type_name: str, index: int) -> pa.Array:
    """One fetched column as Arrow: as it is when Arrow takes it, else each value
    converted to the column's kind first (``_converter``); ValueError when neither fits."""
    arrow_type = _arrow_type(base, type_name)
    errors = (pa.ArrowException, TypeError, ValueError, OverflowError,
              decimal.InvalidOperation)
    try:
        return pa.array(values, type=arrow_type)
    except errors:
        pass
    convert = _converter(base)
    try:
        return pa.array([None if value is None else convert(value) for value in values],
                        type=arrow_type)
    except errors as exc:
        raise ValueError(f"column {index}: {exc}") from None


def _summary_db() -> duckdb.DuckDBPyConnection:
    """The process's in-memory DuckDB for ``local_summary`` (opened on first use; it
    holds nothing between calls: each registers its rows on its own cursor)."""
    global _SUMMARY_DB
    with _SUMMARY_DB_LOCK:
        if _SUMMARY_DB is None:
            _SUMMARY_DB = duckdb.connect(config={"threads": 1, "memory_limit": "256MB"})
        return _SUMMARY_DB


def engine_summary_sql(sql: str, columns: Sequence[str], types: Sequence[str],
                       number: Callable[[str, str], str], fence: str) -> str:
    """The engine-side summary query of ``sql``: one row that ``result_sql.read_summary``
    decodes. ``number(column, base type)`` is the dialect's expression for a candidate's
    numeric value (text read as a number where it looks like one); it is computed once
    per row in a derived table that ``fence`` (e.g. PostgreSQL's ``OFFSET 0``) keeps the
    planner from merging, so the five aggregates do not each evaluate it again."""
    candidates = summary_candidates(columns, types)
    aliases = ", ".join(f"c{i}" for i in range(len(columns)))
    values = ", ".join(f"{number(f'c{i}', base)} AS v{i}" for i, _name, base in candidates)
    select = ["count(*)"] + [f"{agg}(v{i})" for i, _name, _base in candidates
                             for agg in ("count", "sum", "min", "max", "avg")]
    # The newlines keep a trailing line comment in sql from eating the ")".
    return (f"WITH t({aliases}) AS (\n{sql}\n)\nSELECT {', '.join(select)} "
            f"FROM (SELECT {values or '1 AS v'} FROM t{fence}) AS s")


def _arrow_type(base: str, type_name: str) -> pa.DataType:
    if base == "DECIMAL":
        precision, _, scale = type_name.partition("(")[2].rstrip(")").partition(",")
        return pa.decimal128(int(precision), int(scale or 0))
    return _ARROW.get(base, pa.float64())


def _converter(base: str) -> Callable[[Any], Any]:
    if base in ("FLOAT", "DOUBLE"):
        return float
    if base == "VARCHAR":
        return lambda value: value if isinstance(value, str) else str(value)
    if base == "DECIMAL":
        return lambda value: value if isinstance(value, decimal.Decimal) else decimal.Decimal(value)
    return int
