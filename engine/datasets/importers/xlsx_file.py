"""Excel workbooks (.xlsx), read with python-calamine (DuckDB's excel extension is not
in the wheel and cannot be downloaded).

Each non-empty sheet becomes a table: named after the file when the workbook has one
such sheet, else ``<file>_<sheet>``. Its header is the first row that looks like one,
below any title rows, and totals rows at its end are left out (``xlsx_layout``; a
person may set both); the table's description says which rows were left out. Column
types come from the cells Excel typed (a date-formatted serial is a date), mapped
explicitly:

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
from python_calamine import CalamineError, CalamineSheet, CalamineWorkbook

from engine.datasets.arrow_copy import ColumnPlan, chunked, copy_rows, create_table
from engine.datasets.importers.base import NULL_STRINGS, Importer, file_stem
from engine.datasets.importers.xlsx_extent import check_workbook
from engine.datasets.importers.xlsx_layout import SheetLayout, find_layout
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
            sheets = [name for name in workbook.sheet_names
                      if next(_data_rows(workbook.get_sheet_by_name(name)), None) is not None]
        except CalamineError as exc:
            raise MalformedSource(f"{source.name} is not a readable Excel workbook: {exc}",
                                  source=source.name) from None
        if not sheets:
            raise EmptySource(f"{source.name} has no sheet with any cells.", source=source.name)
        for sheet in sheets:
            wanted = file_stem(source.name) if len(sheets) == 1 else f"{file_stem(source.name)}_{sheet}"
            self._load_sheet(workbook.get_sheet_by_name(sheet), f"{source.name}, sheet {sheet}",
                             target.table_name(wanted), source, target)

    @staticmethod
    def _load_sheet(sheet: CalamineSheet, where: str, table: str, source: FileSource,
                    target: ImportTarget) -> None:
        try:
            layout = find_layout(lambda: _data_rows(sheet), target.layout_for(table), _kind)
        except LookupError as exc:
            raise MalformedSource(f"{where}: the header row set for table {table} is wrong: "
                                  f"{exc}.", source=source.name) from None
        # Columns with neither a header nor a value (under a title merged wider than the
        # table) are not the table's.
        kept = [index for index, (cell, kinds) in enumerate(zip(layout.header, layout.kinds))
                if cell is not None or kinds]
        book = NameBook()
        plans = [_plan(book.claim(_cell_text(layout.header[index])
                                  if layout.header[index] is not None else "", "col"),
                       layout.kinds[index]) for index in kept]
        create_table(target, table, plans)
        copy_rows(target, table, plans, chunked(_rows(sheet, layout, kept)), source=where)
        _note_layout(target, table, layout)
        target.finish_table(table, source.name)


def _data_rows(sheet: CalamineSheet) -> Iterator[tuple[int, list]]:
    """Every non-blank row of the sheet with its Excel row number, NULL words made None.
    (Calamine's rows start at the sheet's first row; its columns at the first used one.)"""
    for index, row in enumerate(sheet.iter_rows()):
        cells = [None if _is_null(cell) else cell for cell in row]
        if any(cell is not None for cell in cells):
            yield index + 1, cells


def _rows(sheet: CalamineSheet, layout: SheetLayout, kept: list[int]) -> Iterator[tuple]:
    """The data rows: below the header, above the footer, in the ``kept`` columns."""
    end = layout.end_row
    for number, row in _data_rows(sheet):
        if number <= layout.header_row:
            continue
        if end is not None and number >= end:
            return
        yield tuple(row[index] if index < len(row) else None for index in kept)


def _note_layout(target: ImportTarget, table: str, layout: SheetLayout) -> None:
    """Say in the table's description which rows of the sheet were left out, and why."""
    if layout.above:
        first = layout.above[0]
        target.note_table(table, f"Header on row {layout.header_row}; "
                                 f"{_rows_count(len(layout.above))} above it left out "
                                 f"(row {first[0]}: {_shown_label(first[1])}).")
    if layout.footer:
        rows = ", ".join(f"row {number}: {label}" if label else f"row {number}"
                         for number, label in layout.footer)
        count = len(layout.footer)
        what = (f"{_rows_count(count)} at the end" if layout.footer_set_by_person
                else "1 totals row" if count == 1 else f"{count} totals rows")
        target.note_table(table, f"{what} left out ({rows}).")


def _rows_count(count: int) -> str:
    return "1 row" if count == 1 else f"{count} rows"


def _shown_label(cells: list) -> str:
    text = " ".join(_cell_text(cell) for cell in cells if cell is not None)
    return text if len(text) <= 60 else text[:57] + "..."


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
