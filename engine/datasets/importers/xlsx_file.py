"""Excel workbooks (.xlsx), read with python-calamine (DuckDB's excel extension is not
in the wheel and cannot be downloaded).

Each non-empty sheet becomes a table: named after the file when the workbook has one
such sheet, else ``<file>_<sheet>``. The first row is the header. Column types come
from the cells Excel typed, mapped explicitly:

- only booleans → BOOLEAN; only whole numbers → BIGINT; numbers → DOUBLE;
- only dates → DATE; dates and date-times → TIMESTAMP; times → TIME; durations → INTERVAL;
- anything else (text, or a mix) → VARCHAR, whole numbers written without ``.0``.

Empty cells and the texts ``NA`` and ``NULL`` are NULL and never decide a type; rows
with no value at all are skipped.

The workbook is measured first (``xlsx_extent``): calamine allocates each sheet's
whole used range, so a sheet over the import's cell budget is refused before it loads.
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import pyarrow as pa
from python_calamine import CalamineError, CalamineWorkbook

from engine.datasets.arrow_copy import ColumnPlan, chunked, copy_rows, create_table
from engine.datasets.importers.base import NULL_STRINGS, Importer, file_stem
from engine.datasets.importers.xlsx_extent import check_workbook
from engine.datasets.naming import NameBook
from engine.datasets.sources import FileSource
from engine.datasets.target import ImportTarget
from shared.errors import EmptySource, MalformedSource

_INT64 = 2**63


class XlsxImporter(Importer):
    kind = "xlsx"
    extensions = (".xlsx", ".xlsm")
    signature = (0, b"PK\x03\x04")

    def load(self, source: FileSource, target: ImportTarget) -> None:
        """One table per non-empty sheet. Raises ``EmptySource``, ``MalformedSource`` or
        ``SourceTooLarge`` and its kinds (``SheetTooLarge``: past the import's limits)."""
        self.expect_signature(source, "Excel (.xlsx)")
        check_workbook(source, target.limits, target.budget)
        try:
            workbook = CalamineWorkbook.from_path(str(source.path))
            sheets = [(name, _header_and_rows(workbook, name)) for name in workbook.sheet_names]
        except CalamineError as exc:
            raise MalformedSource(f"{source.name} is not a readable Excel workbook: {exc}",
                                  source=source.name) from None
        sheets = [(name, header) for name, header in sheets if header is not None]
        if not sheets:
            raise EmptySource(f"{source.name} has no sheet with any cells.", source=source.name)
        for sheet, header in sheets:
            wanted = file_stem(source.name) if len(sheets) == 1 else f"{file_stem(source.name)}_{sheet}"
            table = target.table_name(wanted)
            book = NameBook()
            names = [book.claim(_cell_text(cell) if cell is not None else "", "col")
                     for cell in header]
            kinds = _column_kinds(_rows(workbook, sheet, len(names)), len(names))
            plans = [_plan(name, kind) for name, kind in zip(names, kinds)]
            create_table(target, table, plans)
            copy_rows(target, table, plans, chunked(_rows(workbook, sheet, len(names))),
                      source=f"{source.name}, sheet {sheet}")
            target.finish_table(table, source.name)


def _data_rows(workbook: CalamineWorkbook, sheet: str) -> Iterator[list]:
    """Every row of the sheet with NULL words made None, blank rows skipped."""
    for row in workbook.get_sheet_by_name(sheet).iter_rows():
        cells = [None if _is_null(cell) else cell for cell in row]
        if any(cell is not None for cell in cells):
            yield cells


def _header_and_rows(workbook: CalamineWorkbook, sheet: str) -> list | None:
    """The sheet's header row, or None if the sheet holds nothing."""
    return next(_data_rows(workbook, sheet), None)


def _rows(workbook: CalamineWorkbook, sheet: str, width: int) -> Iterator[tuple]:
    rows = _data_rows(workbook, sheet)
    next(rows)  # the header
    for row in rows:
        yield tuple(row[:width]) + (None,) * (width - len(row))


def _column_kinds(rows: Iterator[tuple], width: int) -> list[set[str]]:
    """The kinds of value (see ``_kind``) each column holds, in one pass over the rows."""
    kinds: list[set[str]] = [set() for _ in range(width)]
    for row in rows:
        for cell, seen in zip(row, kinds):
            if cell is not None and "text" not in seen:
                seen.add(_kind(cell))
    return kinds


def _is_null(cell: object) -> bool:
    return cell is None or (isinstance(cell, str) and cell.strip() in NULL_STRINGS)


def _kind(cell: object) -> str:
    if isinstance(cell, bool):
        return "bool"
    if isinstance(cell, int):
        return "int"
    if isinstance(cell, float):
        return "int" if cell.is_integer() and abs(cell) < _INT64 else "float"
    if isinstance(cell, dt.datetime):
        return "datetime"
    if isinstance(cell, dt.date):
        return "date"
    if isinstance(cell, dt.time):
        return "time"
    if isinstance(cell, dt.timedelta):
        return "timedelta"
    return "text"


def _plan(name: str, kinds: set[str]) -> ColumnPlan:
    if kinds == {"bool"}:
        return ColumnPlan(name, "BOOLEAN", pa.bool_())
    if kinds == {"int"}:
        return ColumnPlan(name, "BIGINT", pa.int64(), int)
    if kinds and kinds <= {"int", "float"}:
        return ColumnPlan(name, "DOUBLE", pa.float64(), float)
    if kinds == {"date"}:
        return ColumnPlan(name, "DATE", pa.date32())
    if kinds and kinds <= {"date", "datetime"}:
        return ColumnPlan(name, "TIMESTAMP", pa.timestamp("us"), _as_datetime)
    if kinds == {"time"}:
        return ColumnPlan(name, "TIME", pa.time64("us"))
    if kinds == {"timedelta"}:
        return ColumnPlan(name, "INTERVAL", pa.duration("us"))
    return ColumnPlan(name, "VARCHAR", pa.string(), _cell_text)


def _as_datetime(cell: dt.date) -> dt.datetime:
    return cell if isinstance(cell, dt.datetime) else dt.datetime(cell.year, cell.month, cell.day)


def _cell_text(cell: object) -> str:
    if isinstance(cell, float) and cell.is_integer():
        return str(int(cell))
    if isinstance(cell, (dt.date, dt.time)):
        return cell.isoformat()
    return str(cell)
