"""DuckDB database files. Every base table becomes a table named after it (``schema_table``
outside ``main``), with the same column types (ENUMs become VARCHAR).

The uploaded file is opened on its own connection, read-only, with external access and
extension loading off and the configuration locked, and its rows are moved over as Arrow
batches: whatever SQL the file carries (views, generated columns, defaults) cannot reach
this machine's files. Only base tables are copied; views are left out.

A small file can hold a great deal: DuckDB compresses stored columns (2,000 strings of
1 MB each fit in 536 KB), so the reading connection has its own memory limit (the
import's ``source_memory_limit``) and no temporary directory (a scan never needs to
spill). Generated columns are refused: DuckDB computes them with the file's own
expression 2,048 rows at a time in memory its limit does not count (2 GB of RSS for
``repeat('x', 1000000)`` under a 256 MB limit), and a copy of such a column would only
be that expression's output; the user can store the values instead
(``CREATE TABLE t2 AS SELECT * FROM t``).
"""
from __future__ import annotations

import duckdb

from engine.datasets.arrow_copy import CHUNK_ROWS, copy_batches
from engine.datasets.importers.base import Importer, duckdb_message
from engine.datasets.naming import quote_ident
from engine.datasets.sources import FileSource
from engine.datasets.target import ImportTarget
from shared.errors import EmptySource, MalformedSource, SourceTooLarge, UnsupportedSource

_LOCKED_DOWN = {
    "enable_external_access": False,
    "autoload_known_extensions": False,
    "autoinstall_known_extensions": False,
    "threads": 1,
    "temp_directory": "",
    "max_temp_directory_size": "0B",
    "lock_configuration": True,
}


class DuckdbImporter(Importer):
    kind = "duckdb"
    types_declared = True
    extensions = (".duckdb", ".ddb", ".db")
    signature = (8, b"DUCK")

    def load(self, source: FileSource, target: ImportTarget) -> None:
        """One table per base table. Raises ``EmptySource`` or ``MalformedSource``."""
        self.expect_signature(source, "DuckDB")
        try:
            upload = duckdb.connect(str(source.path), read_only=True, config={
                **_LOCKED_DOWN, "memory_limit": target.limits.source_memory_limit})
        except duckdb.Error as exc:
            raise MalformedSource(f"{source.name} could not be opened as a DuckDB database: "
                                  f"{duckdb_message(exc)}", source=source.name) from None
        try:
            tables = upload.execute(
                "SELECT schema_name, table_name FROM duckdb_tables() "
                "WHERE database_name = current_database() AND NOT internal AND NOT temporary "
                "ORDER BY schema_name, table_name").fetchall()
            if not tables:
                raise EmptySource(f"{source.name} holds no tables.", source=source.name)
            for schema, name in tables:
                self._copy_table(upload, source, schema, name, target)
        finally:
            upload.close()

    @staticmethod
    def _copy_table(upload: duckdb.DuckDBPyConnection, source: FileSource, schema: str,
                    name: str, target: ImportTarget) -> None:
        qualified = f"{quote_ident(schema)}.{quote_ident(name)}"
        described = upload.execute(
            "SELECT column_name, data_type, is_generated FROM duckdb_columns() "
            "WHERE database_name = current_database() AND schema_name = ? AND table_name = ? "
            "AND NOT internal ORDER BY column_index", [schema, name]).fetchall()
        where = f"table {schema}.{name}"
        target.limits.check_columns(len(described), source.name, where)
        generated = [column for column, _, is_generated in described if is_generated]
        if generated:
            raise UnsupportedSource(
                f"{source.name}, {where}: generated columns cannot be imported "
                f"({', '.join(generated[:5])}); store their values instead, e.g. "
                "CREATE TABLE copy AS SELECT * FROM the table.", source=source.name,
                table=f"{schema}.{name}")
        columns = [(column, data_type) for column, data_type, _ in described]
        table = target.table_name(name if schema == "main" else f"{schema}_{name}")
        body = ", ".join(f"{quote_ident(column)} {_portable(data_type)}"
                         for column, data_type in columns)
        target.con.execute(f"CREATE TABLE {quote_ident(table)} ({body})")
        select = ", ".join(quote_ident(column) for column, _ in columns)
        relation = upload.sql(f"SELECT {select} FROM {qualified}")
        # DuckDB 2 names it to_arrow_reader; 1.x fetch_arrow_reader.
        reader = getattr(relation, "to_arrow_reader", None) or relation.fetch_arrow_reader
        try:  # the first batch is read by reader(), the others as they are copied
            copy_batches(target, table, reader(CHUNK_ROWS), source=f"{source.name}, {where}")
        except duckdb.OutOfMemoryException:
            raise SourceTooLarge(
                f"{source.name}, {where}: reading it needs more than "
                f"{target.limits.source_memory_limit} of memory, the limit for reading an "
                "uploaded DuckDB file (SUNRISE_IMPORT_SOURCE_MEMORY_LIMIT).",
                source=source.name) from None
        target.finish_table(table, source.name)


def _portable(data_type: str) -> str:
    """The column type to declare here: an ENUM's type lives in the other file."""
    return "VARCHAR" if data_type.startswith("ENUM(") else data_type
