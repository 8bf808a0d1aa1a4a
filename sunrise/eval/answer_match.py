"""Answer accuracy: do the gold values appear in what the user was shown?

A gold value counts as found when the answer text states it or a chart of the
answer holds it:

- a number: a figure of the text that stands for it as a person rounds
  (``worker.answer.number_check.stands_for``: ``58.7k`` for 58665, ``17.4%`` for 0.1742), or
  a chart cell that agrees with it (``result_match.numbers_agree``);
- a text value: the text contains it (case-insensitive, as a whole word), or a chart
  cell equals it;
- a date (``YYYY-MM-DD``): the text gives that date in ISO, US (``11/27/2013``) or
  written form (``November 27``, ``27 Nov``), or a chart cell holds it.

Pure functions, no I/O.
"""
from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sunrise.eval.result_match import cells_equal, is_number, normalise
from worker.answer.number_check import stands_for
from worker.answer.number_parse import find_figures

_ISO_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:T00:00:00)?$")
# Beyond this many distinct values a result is a listing; every value is still looked
# for, but the report shows only the first missing ones.
MISSING_SHOWN = 10


@dataclass(frozen=True)
class AnswerMatch:
    found: int
    total: int
    missing: list[Any] = field(default_factory=list)

    @property
    def correct(self) -> bool:
        return self.total > 0 and self.found == self.total


def gold_values(rows: Sequence[tuple]) -> list[Any]:
    """The distinct non-null cells of a gold result, in reading order."""
    seen: list[Any] = []
    for row in rows:
        for cell in row:
            value = normalise(cell)
            if value is not None and not any(cells_equal(value, other) and type(value) is type(
                    other) for other in seen):
                seen.append(value)
    return seen


def match_answer(values: Sequence[Any], answer_text: str, charts: Sequence[dict],
                 tolerance: float = 0.0) -> AnswerMatch:
    """How many of ``values`` the answer shows (see the module doc)."""
    figures = [f for f in find_figures(answer_text or "") if f.kind in ("number", "year")]
    cells = [normalise(v) for chart in charts or [] for row in chart.get("data") or []
             for v in (row.values() if isinstance(row, dict) else row)]
    lowered = (answer_text or "").lower()
    missing = []
    found = 0
    for value in values:
        if _found(value, figures, cells, lowered, answer_text or "", tolerance):
            found += 1
        elif len(missing) < MISSING_SHOWN:
            missing.append(value)
    return AnswerMatch(found, len(values), missing)


def _found(value: Any, figures: list, cells: list, lowered: str, text: str,
           tolerance: float) -> bool:
    if any(cells_equal(value, cell, tolerance) for cell in cells):
        return True
    if is_number(value):
        return any(stands_for(f, float(value)) for f in figures)
    if isinstance(value, bool):
        return str(value).lower() in lowered
    value = str(value)
    date = _ISO_DATE.match(value)
    if date:
        return _date_in_text(dt.date(*map(int, date.groups())), text, lowered)
    if any(str(cell).lower() == value.lower() for cell in cells if isinstance(cell, str)):
        return True
    return re.search(rf"(?<!\w){re.escape(value.lower())}(?!\w)", lowered) is not None


def _date_in_text(day: dt.date, text: str, lowered: str) -> bool:
    if day.isoformat() in text:
        return True
    if any(f.kind == "date" and f.iso == day.isoformat() for f in find_figures(text)):
        return True
    month, short = day.strftime("%B").lower(), day.strftime("%b").lower()
    forms = (rf"\b(?:{month}|{short}\.?)\s+{day.day}(?:st|nd|rd|th)?\b",
             rf"\b{day.day}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{month}|{short})\b")
    return any(re.search(form, lowered) for form in forms)
