"""The registry of data sources: adding one is a new module here plus one line in IMPORTERS.

``importer_for(source)`` picks the first importer that claims the source (by file
extension, checking the file's first bytes where an extension is ambiguous, or by
the database URL's backend).
"""
from __future__ import annotations

from engine.datasets.importers.base import Importer
from engine.datasets.importers.csv_file import CsvImporter
from engine.datasets.importers.duckdb_file import DuckdbImporter
from engine.datasets.importers.json_file import JsonImporter
from engine.datasets.importers.live_database import LiveDatabaseImporter
from engine.datasets.importers.parquet_file import ParquetImporter
from engine.datasets.importers.sqlite_file import SqliteImporter
from engine.datasets.importers.xlsx_file import XlsxImporter
from engine.datasets.sources import DatabaseSource, Source
from shared.errors import UnsupportedSource

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
