"""DuckDB database files. Every base table becomes a table named after it (``schema_table``
outside ``main``), with the same column types (ENUMs become VARCHAR).

The uploaded file is opened on its own connection, read-only, with external access and
extension loading off and the configuration locked, and its rows are moved over as Arrow
batches: whatever SQL the file carries (views, generated columns, defaults) cannot reach
this machine's files. Only base tables are copied; views are left out.
"""
from __future__ import annotations

import duckdb

from shared.errors import EmptySource, MalformedSource
from worker.datasets.arrow_copy import CHUNK_ROWS, copy_batches
from worker.datasets.importers.base import Importer, duckdb_message
from worker.datasets.naming import quote_ident
from worker.datasets.sources import FileSource
from worker.datasets.target import ImportTarget

_LOCKED_DOWN = {
    "enable_external_access": False,
    "autoload_known_extensions": False,
    "autoinstall_known_extensions": False,
    "threads": 1,
    "lock_configuration": True,
}


class DuckdbImporter(Importer):
    kind = "duckdb"
    extensions = (".duckdb", ".ddb", ".db")
    signature = (8, b"DUCK")

    def load(self, source: FileSource, target: ImportTarget) -> None:
        """One table per base table. Raises ``EmptySource`` or ``MalformedSource``."""
        self.expect_signature(source, "DuckDB")
        try:
            upload = duckdb.connect(str(source.path), read_only=True, config=dict(_LOCKED_DOWN))
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
                self._copy_table(upload, schema, name, target)
        finally:
            upload.close()

    @staticmethod
    def _copy_table(upload: duckdb.DuckDBPyConnection, schema: str, name: str,
                    target: ImportTarget) -> None:
        qualified = f"{quote_ident(schema)}.{quote_ident(name)}"
        columns = upload.execute(
            "SELECT column_name, data_type FROM duckdb_columns() "
            "WHERE database_name = current_database() AND schema_name = ? AND table_name = ? "
            "AND NOT internal ORDER BY column_index", [schema, name]).fetchall()
        table = target.table_name(name if schema == "main" else f"{schema}_{name}")
        body = ", ".join(f"{quote_ident(column)} {_portable(data_type)}"
                         for column, data_type in columns)
        target.con.execute(f"CREATE TABLE {quote_ident(table)} ({body})")
        select = ", ".join(quote_ident(column) for column, _ in columns)
        relation = upload.sql(f"SELECT {select} FROM {qualified}")
        # DuckDB 2 names it to_arrow_reader; 1.x fetch_arrow_reader.
        reader = getattr(relation, "to_arrow_reader", None) or relation.fetch_arrow_reader
        copy_batches(target, table, reader(CHUNK_ROWS))
        target.finish_table(table)


def _portable(data_type: str) -> str:
    """The column type to declare here: an ENUM's type lives in the other file."""
    return "VARCHAR" if data_type.startswith("ENUM(") else data_type
