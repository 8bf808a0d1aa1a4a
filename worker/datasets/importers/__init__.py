"""The registry of data sources: adding one is a new module here plus one line in IMPORTERS.

``importer_for(source)`` picks the first importer that claims the source (by file
extension, checking the file's first bytes where an extension is ambiguous, or by
the database URL's backend).
"""
from __future__ import annotations

from shared.errors import UnsupportedSource
from worker.datasets.importers.base import Importer
from worker.datasets.importers.csv_file import CsvImporter
from worker.datasets.importers.duckdb_file import DuckdbImporter
from worker.datasets.importers.json_file import JsonImporter
from worker.datasets.importers.live_database import LiveDatabaseImporter
from worker.datasets.importers.parquet_file import ParquetImporter
from worker.datasets.importers.sqlite_file import SqliteImporter
from worker.datasets.importers.xlsx_file import XlsxImporter
from worker.datasets.sources import DatabaseSource, Source

IMPORTERS: tuple[Importer, ...] = (
    CsvImporter(),
    ParquetImporter(),
    JsonImporter(),
    XlsxImporter(),
    SqliteImporter(),
    DuckdbImporter(),
    LiveDatabaseImporter(),
)


def importer_for(source: Source) -> Importer:
    """The importer for ``source``; raises ``UnsupportedSource`` naming what is supported."""
    for importer in IMPORTERS:
        if importer.claims(source):
            return importer
    if isinstance(source, DatabaseSource):
        backends = sorted({b for i in IMPORTERS for b in i.backends})
        raise UnsupportedSource(
            f"{source.display}: databases of type {source.parsed().get_backend_name()!r} "
            f"cannot be imported; supported: {', '.join(backends)}.", source=source.display)
    extensions = sorted({e for i in IMPORTERS for e in i.extensions})
    raise UnsupportedSource(f"{source.name}: this kind of file cannot be imported; "
                            f"supported: {', '.join(extensions)}.", source=source.name)


__all__ = ["IMPORTERS", "Importer", "importer_for"]
