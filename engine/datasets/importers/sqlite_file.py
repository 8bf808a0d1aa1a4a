"""SQLite database files, read with the standard library (DuckDB's sqlite scanner is not in
the wheel and cannot be downloaded). Every table becomes a table named after it.

SQLite stores each value with its own type whatever the column declares, so types come
from what is stored, counted in one pass per table, and mapped explicitly:

- only integers → BIGINT (BOOLEAN when declared BOOL/BOOLEAN and every value is 0 or 1);
- integers and reals → DOUBLE; only blobs → BLOB;
- text in a column declared DATE, DATETIME or TIMESTAMP → DATE/TIMESTAMP when every
  value parses as one, else VARCHAR;
- anything else → VARCHAR (numbers written as text).
"""
from __future__ import annotations

import sqlite3
from pathlib import Path

import duckdb
import pyarrow as pa

from engine.datasets.arrow_copy import CHUNK_ROWS, ColumnPlan, copy_rows, create_table
from engine.datasets.importers.base import Importer
from engine.datasets.naming import quote_ident
from engine.datasets.sources import FileSource
from engine.datasets.target import ImportTarget
from shared.errors import EmptySource, MalformedSource

_STORAGE = ("integer", "real", "text", "blob")
_TEMPORAL = {"DATE": "DATE", "DATETIME": "TIMESTAMP", "TIMESTAMP": "TIMESTAMP"}


class SqliteImporter(Importer):
    kind = "sqlite"
    extensions = (".sqlite", ".sqlite3", ".db", ".db3")
    signature = (0, b"SQLite format 3\x00")

    def load(self, source: FileSource, target: ImportTarget) -> None:
        """One table per SQLite table. Raises ``EmptySource`` or ``MalformedSource``."""
        self.expect_signature(source, "SQLite")
        con = _open_read_only(source.path)
        try:
            tables = [name for (name,) in con.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' "
                "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name")]
            if not tables:
                raise EmptySource(f"{source.name} holds no tables.", source=source.name)
            for name in tables:
                self._copy_table(con, source, name, target)
        except sqlite3.DatabaseError as exc:
            raise MalformedSource(f"{source.name} could not be read as SQLite: {exc}",
                                  source=source.name) from None
        finally:
            con.close()

    def _copy_table(self, con: sqlite3.Connection, source: FileSource, name: str,
                    target: ImportTarget) -> None:
        declared = [(row[1], (row[2] or "").upper()) for row in
                    con.execute(f"PRAGMA table_info({quote_ident(name)})")]
        target.limits.check_columns(len(declared), source.name, f"table {name}")
        plans = _plans(con, name, declared)
        table = target.table_name(name)
        create_table(target, table, plans)
        cursor = con.execute(f"SELECT {', '.join(quote_ident(c) for c, _ in declared)} "
                             f"FROM {quote_ident(name)}")
        copy_rows(target, table, plans, iter(lambda: cursor.fetchmany(CHUNK_ROWS), []),
                  source=source.name)
        for plan, (column, declared_type) in zip(plans, declared):
            temporal = _TEMPORAL.get(declared_type.split("(")[0].strip())
            if plan.duckdb_type == "VARCHAR" and temporal:
                _narrow_to(target.con, table, column, temporal)
        target.finish_table(table, source.name)


def _open_read_only(path: Path) -> sqlite3.Connection:
    # immutable=1: no locks, no journal or WAL files written beside the upload.
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)


def _plans(con: sqlite3.Connection, table: str, declared: list[tuple[str, str]]) -> list[ColumnPlan]:
    """One pass over the table counting each column's stored types (and 0/1 integers)."""
    counts = []
    for column, _ in declared:
        ident = quote_ident(column)
        counts += [f"sum(typeof({ident}) = '{kind}')" for kind in _STORAGE]
        counts.append(f"sum(typeof({ident}) = 'integer' AND {ident} NOT IN (0, 1))")
    row = con.execute(f"SELECT {', '.join(counts)} FROM {quote_ident(table)}").fetchone()
    width = len(_STORAGE) + 1
    plans = []
    for index, (column, declared_type) in enumerate(declared):
        integer, real, text, blob, not_bool = (n or 0 for n in row[index * width:(index + 1) * width])
        plans.append(_plan(column, declared_type, integer, real, text, blob, not_bool))
    return plans


def _plan(column: str, declared: str, integer: int, real: int, text: int, blob: int,
          not_bool: int) -> ColumnPlan:
    if text == blob == 0 and real == 0:
        if integer and not not_bool and declared.startswith("BOOL"):
            return ColumnPlan(column, "BOOLEAN", pa.bool_(), bool)
        return ColumnPlan(column, "BIGINT", pa.int64())
    if text == blob == 0:
        return ColumnPlan(column, "DOUBLE", pa.float64(), float)
    if blob and not (integer or real or text):
        return ColumnPlan(column, "BLOB", pa.binary())
    return ColumnPlan(column, "VARCHAR", pa.string(), _text)


def _text(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _narrow_to(con: duckdb.DuckDBPyConnection, table: str, column: str, duckdb_type: str) -> None:
    """Retype a text column to ``duckdb_type`` if every value parses as one; else keep it."""
    ident = quote_ident(column)
    (misfits,) = con.execute(
        f"SELECT count(*) FROM {quote_ident(table)} WHERE {ident} IS NOT NULL "
        f"AND TRY_CAST({ident} AS {duckdb_type}) IS NULL").fetchone()
    if misfits == 0:
        con.execute(f"ALTER TABLE {quote_ident(table)} ALTER {ident} TYPE {duckdb_type}")
