"""Copying rows into the dataset in chunks, through Apache Arrow.

Sources DuckDB cannot read itself (spreadsheets, SQLite, live databases, which have
no scanner in the extension-free wheel) hand over rows in chunks; each chunk becomes
an Arrow table with explicitly chosen types and DuckDB appends it in one statement.
Memory stays flat in the size of the source: one chunk at a time.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import duckdb
import pyarrow as pa

from engine.datasets.naming import quote_ident
from engine.datasets.target import ImportTarget
from shared.errors import MalformedSource

CHUNK_ROWS = 50_000
_CHUNK_VIEW = "sunrise_import_chunk"
_ARROW_ERRORS = (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError,
                 ValueError, OverflowError)


@dataclass(frozen=True)
class ColumnPlan:
    """How one source column lands in DuckDB: its type there, the Arrow type that carries
    it, and an optional conversion of each non-null Python value on the way."""

    name: str
    duckdb_type: str
    arrow_type: pa.DataType
    convert: Callable[[Any], Any] | None = None


def create_table(target: ImportTarget, table: str, columns: Sequence[ColumnPlan]) -> None:
    """CREATE ``table`` with the planned column names and types."""
    body = ", ".join(f"{quote_ident(c.name)} {c.duckdb_type}" for c in columns)
    target.con.execute(f"CREATE TABLE {quote_ident(table)} ({body})")


def chunked(rows: Iterable[Sequence[Any]], size: int = CHUNK_ROWS) -> Iterator[list]:
    """``rows`` in lists of at most ``size``."""
    iterator = iter(rows)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk


def copy_rows(target: ImportTarget, table: str, columns: Sequence[ColumnPlan],
              chunks: Iterable[Sequence[Sequence[Any]]], *, source: str) -> int:
    """Append every chunk of row tuples to ``table``, reporting rows so far; returns the count.

    Raises ``MalformedSource`` naming ``source``, the table, the 1-based row and the
    column of the first value that does not fit its planned type; ``TooManyRows`` or
    ``SourceTooLarge`` as soon as a chunk passes the import's limits.
    """
    copied = 0
    for chunk in chunks:
        if not chunk:
            continue
        arrays = [_array(list(values), column, copied, source, table)
                  for column, values in zip(columns, zip(*chunk))]
        data = pa.Table.from_arrays(arrays, names=[f"c{i}" for i in range(len(columns))])
        copied = _charge(target, data, copied, source)
        insert_arrow(target.con, table, data)
        target.report(table, copied)
    return copied


def copy_batches(target: ImportTarget, table: str,
                 batches: Iterable[pa.RecordBatch | pa.Table], *, source: str) -> int:
    """Append Arrow batches (already typed) to ``table``, reporting rows so far; raises
    ``TooManyRows`` or ``SourceTooLarge`` (naming ``source``) past the import's limits."""
    copied = 0
    for batch in batches:
        copied = _charge(target, batch, copied, source)
        insert_arrow(target.con, table, batch)
        target.report(table, copied)
    return copied


def _charge(target: ImportTarget, data: pa.Table | pa.RecordBatch, copied: int,
            source: str) -> int:
    """Count a chunk against the import's budget before it is stored; the rows so far."""
    copied += data.num_rows
    target.budget.check_rows(copied, source)
    target.budget.charge_bytes(data.nbytes, source)
    return copied


def insert_arrow(con: duckdb.DuckDBPyConnection, table: str, data: pa.Table | pa.RecordBatch) -> None:
    """``INSERT INTO table SELECT * FROM data``: columns by position, cast to the table's types."""
    con.register(_CHUNK_VIEW, data)
    try:
        con.execute(f"INSERT INTO {quote_ident(table)} SELECT * FROM {_CHUNK_VIEW}")
    finally:
        con.unregister(_CHUNK_VIEW)


def _array(values: list, column: ColumnPlan, offset: int, source: str, table: str) -> pa.Array:
    try:
        convert = column.convert
        if convert is None:
            return pa.array(values, type=column.arrow_type)
        return pa.array([None if v is None else convert(v) for v in values],
                        type=column.arrow_type)
    except _ARROW_ERRORS:
        index, value = _first_misfit(values, column)
        row = offset + index + 1
        raise MalformedSource(
            f"{source}, table {table}, row {row:,}, column {column.name}: the value "
            f"{_shown(value)} does not fit the column's type {column.duckdb_type}.",
            source=source, table=table, row=row) from None


def _first_misfit(values: list, column: ColumnPlan) -> tuple[int, Any]:
    for index, value in enumerate(values):
        try:
            converted = value if column.convert is None or value is None else column.convert(value)
            pa.array([converted], type=column.arrow_type)
        except _ARROW_ERRORS:
            return index, value
    return 0, values[0] if values else None


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
