"""A live result's rows and summary, made the DuckDB sandbox's way.

- ``bounded_row`` cuts one fetched row's cells as ``result_sql.bounded_rows_sql`` does
  inside DuckDB (text to ``MAX_CELL_CHARS + 1`` characters, blobs to the bytes whose hex
  fits a cell, nested values rendering longer than a cell to their first characters as
  ``CutText``) and estimates its rendered size the same way (small values 24, text its
  length, a blob twice its bytes), so the fetch stops at the same byte budget.
- ``local_summary`` computes the summary of a result fetched whole, with
  ``result_sql.summary_sql`` itself on an in-memory DuckDB holding the candidate columns:
  the figures are the sandbox's. One in-memory database per process serves every call,
  each on a cursor of its own (the fetched rows registered on that cursor only):
  opening a fresh DuckDB database per query cost more than the query itself.
- ``engine_summary_sql`` wraps the statement for a summary computed on the engine (a
  result too large to fetch), positional column names as ``result_sql`` uses.

Pure, apart from the in-memory DuckDB of ``local_summary``.
"""
from __future__ import annotations

import datetime as dt
import decimal
import json
import threading
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import duckdb
import pyarrow as pa

from engine.sql.query_result import MAX_CELL_CHARS, ColumnSummary, CutText
from engine.sql.result_sql import read_summary, summary_candidates, summary_sql

_BLOB_BYTES = MAX_CELL_CHARS // 2
_SMALL_VALUE_CHARS = 24
_SMALL = (bool, int, float, decimal.Decimal, dt.date, dt.time, dt.timedelta, uuid.UUID)
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


def local_summary(columns: Sequence[str], types: Sequence[str],
                  rows: Sequence[tuple]) -> tuple[int, list[ColumnSummary]]:
    """``(total rows, summary)`` of a whole result already fetched, computed by DuckDB
    with the sandbox's own SQL. Raises ``ValueError`` when a value does not fit its
    column's type (the caller then asks the engine)."""
    candidates = summary_candidates(columns, types)
    if not candidates:
        return len(rows), []
    arrays, names = [], []
    for index, _name, base in candidates:
        arrow_type = _arrow_type(base, types[index])
        convert = _converter(base)
        try:
            arrays.append(pa.array([None if row[index] is None else convert(row[index])
                                    for row in rows], type=arrow_type))
        except (pa.ArrowException, TypeError, ValueError, OverflowError,
                decimal.InvalidOperation) as exc:
            raise ValueError(f"column {index}: {exc}") from None
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


def _summary_db() -> duckdb.DuckDBPyConnection:
    """The process's in-memory DuckDB for ``local_summary`` (opened on first use; it
    holds nothing between calls: each registers its rows on its own cursor)."""
    global _SUMMARY_DB
    with _SUMMARY_DB_LOCK:
        if _SUMMARY_DB is None:
            _SUMMARY_DB = duckdb.connect(config={"threads": 1, "memory_limit": "256MB"})
        return _SUMMARY_DB


def engine_summary_sql(sql: str, columns: Sequence[str], types: Sequence[str],
                       select: Callable[[list[tuple[int, str, str]]], list[str]]) -> str:
    """The engine-side summary query of ``sql``: one row that ``result_sql.read_summary``
    decodes. ``select`` is the dialect's select list for the summary candidates."""
    aliases = ", ".join(f"c{i}" for i in range(len(columns)))
    # The newlines keep a trailing line comment in sql from eating the ")".
    return (f"WITH t({aliases}) AS (\n{sql}\n)\nSELECT "
            f"{', '.join(select(summary_candidates(columns, types)))} FROM t")


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
