"""The faithfulness check: is every figure in an answer one the model was shown?

After the final answer, every figure in ``answer_text`` (see ``number_parse``) is
matched against the values of this job's tool results -- the exact texts the
model received: the rows shown, the ``rows=``/``shown=`` counts and the summary
figures -- allowing the rounding a person would do:

- a figure stands for every value that rounds to it at the precision written:
  ``12.6`` for 12.55..12.65, ``58.7k`` for 58,650..58,750, ``58,665`` for
  58,664.5..58,665.5; a round integer of 1,000 or more (``59,000``) for anything
  that rounds to its last non-zero digit;
- a percentage matches a value already in percent (17.4) or a fraction (0.174);
- hedged figures are ranges: ``about 59,000`` ±500, ``over 300,000`` 300,000 up to
  the next step of its last non-zero digit (400,000), ``nearly 13`` above 12 up to 13
  (each bound widened by the rounding of its last digit);
- a figure written without a sign also matches a negative value ("arrived 9.5
  minutes early" for -9.5); a written minus needs a negative value;
- a date or time matches one in the results (a timestamp's date and ``HH:MM``,
  an ``hhmm`` integer such as ``dep_time``, or for a whole hour such as ``7 pm`` an
  hour value 19); a year, month or day also matches the parts of any date shown.

Figures the model may state without a query result are supported too: numbers in
the question and in earlier turns of the conversation (shown to the model as
context), numeric literals of the SQL it ran (``LIMIT 5``, ``dep_delay > 60``; not
the column positions of ``GROUP BY 1`` or the digits of ``round(x, 2)``), and
calendar years the data spans (:meth:`Evidence.add_years`, for "in 2013").
``{{chart:N}}`` tokens, query ids, list markers, ranks and identifiers are not
figures (``number_parse``).

The result is ``{"checked": n, "unsupported": [{"text", "position"}]}``, where
``position`` is the figure's offset in ``answer_text`` (in characters, i.e. code
points) and ``text`` the figure as written there.
"""
from __future__ import annotations

import bisect
import csv
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from worker.answer.number_parse import Figure, find_figures, parse_plain_number

_HEADER = re.compile(r"query_id=\d+\s+rows=(\d+)\s+shown=(\d+)")
_SUMMARY_LINE = re.compile(r"summary over all (\d+) rows")
_DIGIT = re.compile(r"\d")
_TIMESTAMP = re.compile(r"(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}))?")
# Integers at least this big, written with three or more trailing zeros, are read as
# rounded ("59,000 flights" for 58,665) even without a hedge word.
ROUNDED_FROM = 1000
_EPSILON = 1e-9


@dataclass
class Evidence:
    """Everything the model saw that a figure in its answer may come from.

    Build it with :meth:`add_tool_result` (the tool-result texts) and
    :meth:`add_context` (the question, earlier turns, the SQL it ran); then
    :func:`check_numbers` asks :meth:`supports`.
    """

    _values: list[float] = field(default_factory=list)
    _dates: set[str] = field(default_factory=set)
    _times: set[str] = field(default_factory=set)
    _years: set[int] = field(default_factory=set)
    _sorted: bool = True

    def add_tool_result(self, text: str) -> None:
        """Take the values of one ``execute_sql`` result text (the format of
        ``engine/sql/result_text.py``); an ``error: ...`` text holds none."""
        if text.startswith("error:"):
            return
        lines = text.split("\n")
        header = _HEADER.match(lines[0]) if lines else None
        if header:
            self._add_value(float(header.group(1)))
            self._add_value(float(header.group(2)))
            lines = lines[1:]
        for line in lines:
            summary = _SUMMARY_LINE.fullmatch(line.strip())
            if summary:
                self._add_value(float(summary.group(1)))
                continue
            # A line without quotes is its cells split at the commas, as csv reads it.
            cells = line.split(",") if '"' not in line and "\r" not in line \
                else [cell for row in csv.reader([line]) for cell in row]
            for cell in cells:
                self._add_cell(cell)

    def add_context(self, text: str) -> None:
        """Take the figures of prose or SQL the model was given or wrote itself."""
        for figure in find_figures(text):
            self._add_figure(figure)

    def add_sql(self, sql: str) -> None:
        """Take the literals of a statement the model ran, minus the column positions of
        ``GROUP BY``/``ORDER BY`` and the precision argument of ``round()``."""
        self.add_context(_ORDINALS.sub(" ", _without_round_digits(sql)))

    def add_years(self, years: Iterable[int]) -> None:
        """Calendar years present in the data: a year written alone is not flagged."""
        self._years.update(years)

    def supports(self, figure: Figure) -> bool:
        """Whether ``figure`` may have come from what was seen (see the module doc)."""
        if figure.kind == "date":
            return self._supports_date(figure)
        if figure.kind == "year" and int(figure.value) in self._years:
            return True
        if figure.kind == "time":
            # "17:05" as shown, as an hhmm integer (dep_time 1705), or a whole hour ("7 pm",
            # "19:00") from an hour column.
            hour, minute = divmod(int(figure.value), 100)
            return (figure.iso in self._times or self._has_any(figure.value, figure.value)
                    or (minute == 0 and self._has_any(hour, hour)))
        return any(self._has_any(lo, hi) for lo, hi in _ranges(figure))

    # -- collecting ----------------------------------------------------------------

    def _add_cell(self, cell: str) -> None:
        if not _DIGIT.search(cell):
            return  # every figure (number, date, time) has a digit: a word holds none
        value = parse_plain_number(cell)
        if value is not None:
            self._add_value(value)
            return
        stamp = _TIMESTAMP.fullmatch(cell.strip()[:16])
        if stamp:
            self._add_date(stamp.group(1))
            if stamp.group(2):
                self._times.add(stamp.group(2))
            return
        for figure in find_figures(cell):
            self._add_figure(figure)

    def _add_figure(self, figure: Figure) -> None:
        if figure.kind == "date" and figure.iso:
            self._add_date(figure.iso)
        elif figure.kind == "time" and figure.iso:
            self._times.add(figure.iso)
            self._add_value(figure.value)
        else:
            self._add_value(figure.value)

    def _add_date(self, iso: str) -> None:
        parts = iso.split("-")
        self._dates.add(iso)
        self._dates.add("-".join(parts[:2]))
        for part in parts:
            self._add_value(float(part))

    def _add_value(self, value: float) -> None:
        self._values.append(value)
        self._sorted = False

    # -- matching ------------------------------------------------------------------

    def _has_any(self, low: float, high: float) -> bool:
        if not self._sorted:
            self._values.sort()
            self._sorted = True
        index = bisect.bisect_left(self._values, low)
        return index < len(self._values) and self._values[index] <= high

    def _supports_date(self, figure: Figure) -> bool:
        if figure.iso in self._dates:
            return True
        # A month given alone ("2013-07") is supported by its year and month.
        parts = (figure.iso or "").split("-")
        return len(parts) == 2 and all(self._has_any(float(p), float(p)) for p in parts)


_ORDINALS = re.compile(
    r"\b(?:GROUP|ORDER)\s+BY\s+\d+(?:\s+(?:ASC|DESC))?(?:\s+NULLS\s+(?:FIRST|LAST))?"
    r"(?:\s*,\s*\d+(?:\s+(?:ASC|DESC))?(?:\s+NULLS\s+(?:FIRST|LAST))?)*", re.IGNORECASE)
_ROUND_CALL = re.compile(r"\bround\s*\(", re.IGNORECASE)
_LAST_INT_ARG = re.compile(r",\s*-?\d+\s*$")


def _without_round_digits(sql: str) -> str:
    """``sql`` with the precision argument of every ``round(x, n)`` blanked."""
    out, last = [], 0
    for match in _ROUND_CALL.finditer(sql):
        depth, index = 1, match.end()
        while index < len(sql) and depth:
            depth += {"(": 1, ")": -1}.get(sql[index], 0)
            index += 1
        inner = sql[match.end():index - 1]
        trailing = _LAST_INT_ARG.search(inner) if depth == 0 else None
        if trailing:
            cut = match.end() + trailing.start()
            out.append(sql[last:cut])
            last = index - 1
    out.append(sql[last:])
    return "".join(out)


def stands_for(figure: Figure, value: float) -> bool:
    """Whether ``figure`` (a number as written) may be ``value`` as a person rounds it:
    the same rule the check applies to every figure of an answer."""
    return any(low <= value <= high for low, high in _ranges(figure))


def _ranges(figure: Figure) -> list[tuple[float, float]]:
    """The values a numeric ``figure`` stands for: its interval, as a fraction too when
    it is a percentage, and negated too when it was written without a minus."""
    low, high = _interval(figure)
    ranges = [(low, high)]
    if figure.percent:
        ranges.append((low / 100, high / 100))
    if figure.value >= 0:
        ranges += [(-hi, -lo) for lo, hi in ranges]
    return ranges


def _interval(figure: Figure) -> tuple[float, float]:
    """The values ``figure`` stands for, as written (see the module doc)."""
    value, unit = figure.value, figure.unit()
    step = unit
    if figure.decimals == 0 and figure.trailing_zeros:
        step = 10.0 ** figure.trailing_zeros * figure.scale
    # A bound is itself written rounded: "over 1,566" holds for 1,566 and "up to 38.85
    # million" for 38,851,317 (and "over" often just means "across").
    if figure.hedge == "over":
        low, high = value - unit / 2, value + step
    elif figure.hedge == "under":
        low, high = value - step, value + unit / 2
    elif figure.hedge == "about" or (figure.trailing_zeros >= 3 and abs(value) >= ROUNDED_FROM):
        low, high = value - step / 2, value + step / 2
    else:
        low, high = value - unit / 2, value + unit / 2
    slack = _EPSILON * max(1.0, abs(value))
    return low - slack, high + slack


def check_numbers(answer_text: str, evidence: Evidence) -> dict:
    """``{"checked": n, "unsupported": [{"text", "position"}]}`` for ``answer_text``.

    Pure apart from reading ``evidence``; never raises for odd text.
    """
    figures = find_figures(answer_text)
    unsupported = [{"text": f.text, "position": f.start}
                   for f in figures if not evidence.supports(f)]
    return {"checked": len(figures), "unsupported": unsupported}


def evidence_from(tool_texts: Iterable[str], context: Iterable[str] = ()) -> Evidence:
    """An ``Evidence`` holding ``tool_texts`` (tool results) and ``context`` (prose, SQL)."""
    evidence = Evidence()
    for text in tool_texts:
        evidence.add_tool_result(text)
    for text in context:
        evidence.add_context(text)
    return evidence
