"""Where a sheet laid out for people keeps its table: the header row and the totals rows.

People put a title (often merged across the table), a note and blank rows above the
header, and a totals row under the data. Calamine gives the sheet's rows with their
Excel row numbers; this module decides:

- **the header**: the first row, among the first ``HEADER_SEARCH_ROWS`` non-blank
  rows, whose cells are mostly distinct short texts and which fills most of the width
  of the rows below it (a title in one merged cell does not); with none such, the
  first non-blank row (as a plain table has it). The rows above it are left out.
- **totals rows** at the bottom: a row labelled ``Total``, ``Sum``, ``Gesamt``...
  (``TOTAL_LABEL``), or one whose numbers all equal the sums of their columns above
  it (what ``=SUM(B2:B9)`` caches). openpyxl writes formulas without cached values, so
  the label alone must do there.
- what a person set instead (``ImportTarget.layout_for``): ``header_row`` is taken as
  the header, ``skip_footer`` rows at the end are left out and no totals are sought.

It reads the rows in one pass, keeping a few at the end to look back at, and hands the
column kinds of the rows that stay (``column_kinds``' work) so the importer types them.
"""
from __future__ import annotations

import math
import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

HEADER_SEARCH_ROWS = 30
# Rows below a candidate header looked at for the table's width.
_WIDTH_PROBE_ROWS = 10
_SHORT_TEXT = 80
# Totals rows sought at the bottom when nobody set skip_footer.
MAX_TOTALS_ROWS = 3
# Rows of data above a row before its numbers equalling the column sums count as totals.
_SUM_MIN_ROWS = 3
TOTAL_LABEL = re.compile(
    r"^(grand\s+total|total\s+g[ée]n[ée]ral|totals?|totale|sum|summe|gesamt(summe)?)"
    r"(\s*[:.]?\s*$|\s+\S)", re.IGNORECASE)

Row = tuple[int, list]  # (Excel row number, cells with blanks as None)


@dataclass
class SheetLayout:
    """Where a sheet's table is: its header row (Excel's number) and cells, the non-blank
    rows above it left out, the data rows' kinds per column, and the rows left out at the
    end (``(row number, label)``) with why."""

    header_row: int
    header: list
    above: list[Row]
    kinds: list[set[str]]
    footer: list[tuple[int, str]] = field(default_factory=list)
    footer_set_by_person: bool = False

    @property
    def end_row(self) -> int | None:
        """The first row number that is not data any more (None: to the end)."""
        return self.footer[0][0] if self.footer else None


def find_layout(rows: Callable[[], Iterator[Row]], layout: dict,
                kind: Callable[[object], str]) -> SheetLayout | None:
    """The sheet's layout, or None if it has no non-blank row. ``rows()`` iterates the
    sheet's non-blank rows afresh; ``kind`` names a cell's kind (see ``xlsx_file``).
    Raises ``LookupError`` when a ``header_row`` set by a person holds no cells."""
    header_row, header, above = _header(rows, layout["header_row"], kind)
    if header_row is None:
        return None
    width = len(header)
    data = ((number, _fit(cells, width)) for number, cells in rows() if number > header_row)
    skip = layout["skip_footer"]
    kinds, footer = _scan(data, width, kind, skip)
    return SheetLayout(header_row, header, above, kinds, footer, skip is not None)


def _header(rows: Callable[[], Iterator[Row]], wanted: int | None,
            kind: Callable[[object], str]) -> tuple[int | None, list, list[Row]]:
    sample: list[Row] = []
    for row in rows():
        if wanted is not None:
            if row[0] == wanted:
                return row[0], row[1], sample
            if row[0] > wanted:
                break
            sample.append(row)
            continue
        sample.append(row)
        if len(sample) >= HEADER_SEARCH_ROWS + _WIDTH_PROBE_ROWS:
            break
    if wanted is not None:
        raise LookupError(f"row {wanted} holds no cells")
    if not sample:
        return None, [], []
    for index, (number, cells) in enumerate(sample[:HEADER_SEARCH_ROWS]):
        if _looks_like_header(cells, sample[index + 1:index + 1 + _WIDTH_PROBE_ROWS], kind):
            return number, cells, sample[:index]
    return sample[0][0], sample[0][1], []


def _looks_like_header(cells: list, below: list[Row], kind: Callable[[object], str]) -> bool:
    values = [cell for cell in cells if cell is not None]
    texts = [str(cell).strip() for cell in values if kind(cell) == "text"]
    if not values or len(texts) * 2 <= len(values):
        return False
    if any(len(text) > _SHORT_TEXT for text in texts):
        return False
    if len({str(cell).strip().lower() for cell in values}) < len(values):
        return False
    width_below = max((_filled(row) for _, row in below), default=len(values))
    return len(values) >= max(1, math.ceil(0.6 * width_below))


def _filled(cells: list) -> int:
    return sum(cell is not None for cell in cells)


def _fit(cells: list, width: int) -> list:
    return cells[:width] + [None] * (width - len(cells))


def _scan(data: Iterable[Row], width: int, kind: Callable[[object], str],
          skip: int | None) -> tuple[list[set[str]], list[tuple[int, str]]]:
    """One pass: each column's kinds over the rows that stay, and the footer rows."""
    kinds: list[set[str]] = [set() for _ in range(width)]
    sums = [0.0] * width
    keep = skip if skip is not None else MAX_TOTALS_ROWS
    # The last rows, each with the column sums and row count above it: maybe the footer.
    tail: deque[tuple[Row, list[float], int]] = deque()
    for counted, row in enumerate(data):
        tail.append((row, list(sums) if skip is None else sums, counted))
        if skip is None:
            _add(sums, row[1], kind)
        if len(tail) > keep:
            _fold(kinds, tail.popleft()[0][1], kind)
    footer: list[tuple[int, str]] = []
    if skip is not None:
        footer = [(number, _label(cells)) for (number, cells), _, _ in tail]
        tail.clear()
    else:
        while tail and _is_totals(*tail[-1], kind):
            (number, cells), _, _ = tail.pop()
            footer.insert(0, (number, _label(cells)))
    for (_, cells), _, _ in tail:
        _fold(kinds, cells, kind)
    return kinds, footer


def _fold(kinds: list[set[str]], cells: list, kind: Callable[[object], str]) -> None:
    for cell, seen in zip(cells, kinds):
        if cell is not None and "text" not in seen:
            seen.add(kind(cell))


def _add(sums: list[float], cells: list, kind: Callable[[object], str]) -> None:
    for index, cell in enumerate(cells):
        if cell is not None and kind(cell) in ("int", "float"):
            sums[index] += cell


def _is_totals(row: Row, sums_above: list[float], rows_above: int,
               kind: Callable[[object], str]) -> bool:
    cells = row[1]
    if TOTAL_LABEL.match(_label(cells)):
        return True
    if rows_above < _SUM_MIN_ROWS:
        return False
    numbers = [(cell, sums_above[index]) for index, cell in enumerate(cells)
               if cell is not None and kind(cell) in ("int", "float")]
    return (any(value != 0 for value, _ in numbers)
            and all(math.isclose(value, total, rel_tol=1e-9, abs_tol=1e-6)
                    for value, total in numbers))


def _label(cells: list) -> str:
    """The row's first text cell (a totals row's label), else ""."""
    return next((cell.strip() for cell in cells if isinstance(cell, str)), "")
