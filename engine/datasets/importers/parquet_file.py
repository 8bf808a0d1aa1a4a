"""Parquet files, read by DuckDB's own ``read_parquet``: the file's types are kept.

The file's footer says how many rows and columns it holds and how large its data is
uncompressed; these are checked against the import's limits before any row is read.
"""
from __future__ import annotations

import duckdb

from engine.datasets.importers.base import Importer, duckdb_message, file_stem
from engine.datasets.naming import quote_ident, sql_literal
from engine.datasets.sources import FileSource
from engine.datasets.target import ImportTarget
from shared.errors import MalformedSource


class ParquetImporter(Importer):
    kind = "parquet"
    types_declared = True
    extensions = (".parquet", ".parq", ".pq")
    signature = (0, b"PAR1")

    def load(self, source: FileSource, target: ImportTarget) -> None:
        """One table named after the file. Raises ``MalformedSource`` if it is not Parquet."""
        self.expect_signature(source, "Parquet")
        table = target.table_name(file_stem(source.name))
        path = sql_literal(str(source.path))
        try:
            _check_footer(target, source, path)
            with target.watch(table):
                target.con.execute(f"CREATE TABLE {quote_ident(table)} AS "
                                   f"SELECT * FROM read_parquet({path})")
        except (duckdb.InvalidInputException, duckdb.IOException) as exc:
            raise MalformedSource(f"{source.name} is not a readable Parquet file: "
                                  f"{duckdb_message(exc)}", source=source.name) from None
        target.finish_table(table, source.name)


def _check_footer(target: ImportTarget, source: FileSource, path: str) -> None:
    """Refuse the file on what its footer declares: columns, rows, uncompressed bytes."""
    con = target.con
    # The schema's first element is its root; its children are the table's columns.
    (columns,) = con.execute(f"SELECT num_children FROM parquet_schema({path}) "
                             "LIMIT 1").fetchone()
    target.limits.check_columns(columns or 0, source.name)
    (rows,) = con.execute(f"SELECT sum(num_rows) FROM parquet_file_metadata({path})").fetchone()
    target.budget.check_rows(rows or 0, source.name)
    (size,) = con.execute(f"SELECT sum(total_uncompressed_size) "
                          f"FROM parquet_metadata({path})").fetchone()
    target.budget.charge_bytes(size or 0, source.name)
