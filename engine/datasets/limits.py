"""What one import may read: the one owner of the import caps and of their refusals.

An upload's size limit counts the bytes sent, which a compressed file (a gzip bomb),
a workbook (a zip of XML) or a DuckDB file (compressed columns) multiply. These caps
count what is actually read, and every importer checks them while it reads, so a
hostile file stops early instead of after filling the disk or the memory:

- ``max_bytes``: uncompressed bytes of all the import's sources together;
- ``max_rows``: rows of all the import's tables together;
- ``max_columns``: columns of one table (checked on the header or schema, before rows);
- ``max_sheet_cells``: rows × columns of an Excel sheet's used range (the reader
  allocates every cell of it), and the cells it lists;
- ``source_memory_limit``: DuckDB's memory limit on the connection reading an upload.

``ImportBudget`` counts one import's bytes and rows against them.
"""
from __future__ import annotations

from dataclasses import dataclass

from shared.errors import SourceTooLarge, TooManyColumns, TooManyRows


@dataclass(frozen=True)
class ImportLimits:
    max_bytes: int = 10 * 2**30
    max_rows: int = 100_000_000
    max_columns: int = 2_000
    max_sheet_cells: int = 10_000_000
    source_memory_limit: str = "1GB"

    @classmethod
    def from_settings(cls, settings) -> ImportLimits:
        """The limits of ``shared.config.Settings`` (``SUNRISE_IMPORT_MAX_*``)."""
        return cls(max_bytes=settings.import_max_bytes, max_rows=settings.import_max_rows,
                   max_columns=settings.import_max_columns,
                   max_sheet_cells=settings.import_max_sheet_cells,
                   source_memory_limit=settings.import_source_memory_limit)

    def check_columns(self, count: int, source: str, part: str = "") -> None:
        """Raise ``TooManyColumns`` naming ``source`` (and ``part``: "table t", "sheet s")
        when one table would have more than ``max_columns`` columns."""
        if count > self.max_columns:
            where = f"{source}, {part}" if part else source
            raise TooManyColumns(
                f"{where} has {count:,} columns; the limit is {self.max_columns:,} columns "
                "per table (SUNRISE_IMPORT_MAX_COLUMNS).", source=source,
                limit=self.max_columns)


class ImportBudget:
    """The bytes and rows one import has read so far, against its ``ImportLimits``."""

    def __init__(self, limits: ImportLimits) -> None:
        self.limits = limits
        self.bytes = 0
        self.rows = 0

    @property
    def bytes_left(self) -> int:
        return max(self.limits.max_bytes - self.bytes, 0)

    @property
    def rows_left(self) -> int:
        return max(self.limits.max_rows - self.rows, 0)

    def charge_bytes(self, count: int, source: str) -> None:
        """Count ``count`` more uncompressed bytes read from ``source``; raises
        ``SourceTooLarge`` once the import's total passes ``max_bytes``."""
        self.bytes += count
        if self.bytes > self.limits.max_bytes:
            raise SourceTooLarge(
                f"{source}: this import's sources hold more than "
                f"{_size(self.limits.max_bytes)} of uncompressed data, the limit per "
                "import (SUNRISE_IMPORT_MAX_BYTES).", source=source,
                limit_bytes=self.limits.max_bytes)

    def check_rows(self, table_rows: int, source: str) -> None:
        """Raise ``TooManyRows`` if ``table_rows`` rows of the table being read, with the
        rows of the tables before it, pass ``max_rows``."""
        if self.rows + table_rows > self.limits.max_rows:
            raise TooManyRows(
                f"{source}: this import holds more than {self.limits.max_rows:,} rows, the "
                "limit per import (SUNRISE_IMPORT_MAX_ROWS).", source=source,
                limit=self.limits.max_rows)

    def add_rows(self, rows: int, source: str) -> None:
        """Count a finished table's rows; raises ``TooManyRows`` past the limit."""
        self.check_rows(rows, source)
        self.rows += rows


def _size(count: int) -> str:
    return f"{count:,} bytes" if count < 2**20 else f"{count / 2**20:,.0f} MB"
