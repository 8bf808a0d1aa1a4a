"""What a CSV cell written for people may hold: no spreadsheet formula (OWASP's CSV
injection rule).

A spreadsheet opening a CSV runs a text cell that starts with ``=``, ``+``, ``-``,
``@``, a tab or a carriage return as a formula (``=HYPERLINK(…)``, ``+cmd|' /C calc'!A0``).
Report cells come from third parties (a snapshot's rows, a shared upload, a question),
so such a text cell gets a leading single quote, which spreadsheets show as text.

Decision: only *text* is neutralised. A value typed as a number (``int``, ``float``,
``Decimal``; not ``bool``) is written as the number it is, so ``-2`` stays a negative
number a spreadsheet can sum; the text ``"-2+3"`` is quoted like any other text.
Rows end in CRLF (RFC 4180): with that terminator ``csv`` quotes a cell holding a CR
as well as one holding an LF, where with ``\n`` alone a bare CR inside a cell is
written unquoted and a spreadsheet reads it as a new row.

The model's tool-result CSV (``engine/sql/result_text.py``) is not for people and
does not use this: its exact text is a contract.
"""
from __future__ import annotations

import csv
import numbers
from collections.abc import Iterable
from typing import IO, Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: Any) -> Any:
    """``value`` ready for ``csv.writer``: None → ``""``; a number stays a number; any
    other value as text, prefixed with ``'`` when it starts like a formula."""
    if value is None:
        return ""
    if isinstance(value, numbers.Number) and not isinstance(value, bool):
        return value
    text = str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def safe_row(values: Iterable[Any]) -> list[Any]:
    """Each of ``values`` through ``safe_cell``."""
    return [safe_cell(v) for v in values]


def report_writer(out: IO[str]) -> Any:
    """The ``csv.writer`` every CSV for people is written with: CRLF rows, minimal
    quoting; pass its rows through ``safe_row``."""
    return csv.writer(out, lineterminator="\r\n")
