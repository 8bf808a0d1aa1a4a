"""Parquet files, read by DuckDB's own ``read_parquet``: the file's types are kept."""
from __future__ import annotations

import duckdb

from shared.errors import MalformedSource
from worker.datasets.importers.base import Importer, duckdb_message, file_stem
from worker.datasets.naming import quote_ident, sql_literal
from worker.datasets.sources import FileSource
from worker.datasets.target import ImportTarget


class ParquetImporter(Importer):
    kind = "parquet"
    extensions = (".parquet", ".parq", ".pq")
    signature = (0, b"PAR1")

    def load(self, source: FileSource, target: ImportTarget) -> None:
        """One table named after the file. Raises ``MalformedSource`` if it is not Parquet."""
        self.expect_signature(source, "Parquet")
        table = target.table_name(file_stem(source.name))
        try:
            with target.watch(table):
                target.con.execute(f"CREATE TABLE {quote_ident(table)} AS "
                                   f"SELECT * FROM read_parquet({sql_literal(str(source.path))})")
        except (duckdb.InvalidInputException, duckdb.IOException) as exc:
            raise MalformedSource(f"{source.name} is not a readable Parquet file: "
                                  f"{duckdb_message(exc)}", source=source.name) from None
        target.finish_table(table)
