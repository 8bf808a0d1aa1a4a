"""Figures written in prose: where they are, what they say, and how precisely.

:func:`find_figures` reads text the way a person does and returns every figure
in it with its exact span: integers, decimals, thousands separators (``58,665``,
``58 665`` with a narrow or no-break space), ``%``/``percent``, ``k``/``M``/``bn``
suffixes and ``thousand``/``million``/``billion`` words, negative numbers
(``-9.5``, ``−9.5``), currency (``$1.2M``, ``€40``, ``USD 12``), hedges
(``about``, ``over``, ``nearly`` ...), ISO dates (``2013-07-04``), year-months,
US dates (``7/4/2013``) and clock times (``17:05``, ``5:05 pm``, ``7 am``).

What is not a figure, and is skipped: ``{{chart:N}}`` tokens, query ids
(``query 3``, ``query_id=3``), chart references, list markers at the start of a
line (``1.``/``2)``), ranks (``#1``, ``3rd``) and identifiers that mix letters
and digits (``N14228``, ``9E``, ``A320``, ``COVID-19``).

Pure functions, no I/O.
"""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Literal

Kind = Literal["number", "year", "date", "time"]
Hedge = Literal["about", "over", "under"]

SCALE_WORDS = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
# Attached suffixes. ``B``/``T`` only count after a currency sign ("$2B"); alone they
# are too often part of a name.
SUFFIXES = {"k": 1e3, "K": 1e3, "M": 1e6, "bn": 1e9, "Bn": 1e9}
CURRENCY_SUFFIXES = {"B": 1e9, "T": 1e12, "m": 1e6}
MINUS_SIGNS = "-\u2212"
GROUP_SEPARATORS = ",\u00a0\u202f\u2009"

_CHART_TOKEN = re.compile(r"\{\{\s*chart\s*:\s*\d+\s*\}\}", re.IGNORECASE)
_DATE = re.compile(
    r"(?<![\w.])(\d{4})-(\d{2})(?:-(\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?)?(?![\w-])")
_US_DATE = re.compile(r"(?<![\w./])(\d{1,2})/(\d{1,2})/(\d{4})(?![\w/])")
_TIME = re.compile(r"(?<![\w.:])(\d{1,2})(?::(\d{2})(?::\d{2})?(?:\s?([ap])\.?m\b\.?)?"
                   r"|\s?([ap])\.?m\b\.?)(?![\w:])", re.IGNORECASE)
_NUMBER = re.compile(
    r"(?P<cur>(?:US|CA|AU)?\$|€|£|¥|(?:USD|EUR|GBP)\s?)?"
    r"(?P<sign>[-\u2212])?"
    r"(?P<cur2>\$|€|£|¥)?"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?(?!\d|,\d)"
    r"|\d{1,3}(?:[\u00a0\u202f\u2009]\d{3})+(?:\.\d+)?(?!\d)"
    r"|\d+(?:\.\d+)?|\.\d+)"
)
_NO_SEPARATORS = str.maketrans(dict.fromkeys(GROUP_SEPARATORS))
_FOUR_DIGITS = re.compile(r"\d{4}")
_ANY_DIGIT = re.compile(r"\d")
# The longest text a _NUMBER match may hold before its first digit: "USD " or "US$", a
# sign, a currency sign, and the point of ".5".
_NUMBER_LEAD = 7
_AFTER = re.compile(
    r"(?:(?P<times>[x×](?![A-Za-z]))"
    r"|(?P<attached>bn|Bn|[kKMBTm](?![A-Za-z])|(?:st|nd|rd|th)(?![A-Za-z])|[A-Za-z_]+))?"
    r"(?P<pct>\s?%|\s(?:percent|per\s?cent|percentage\s+points?|pp)\b)?"
    r"(?P<word>\s(?:thousand|million|billion|trillion)\b)?",
)
_HEDGES: list[tuple[Hedge, re.Pattern]] = [
    ("over", re.compile(r"(?:\b(?:over|above|exceeding|more\s+than|greater\s+than|at\s+least|"
                        r"upwards\s+of|in\s+excess\s+of|north\s+of)|[>≥])\s*$", re.IGNORECASE)),
    ("under", re.compile(r"(?:\b(?:under|below|nearly|almost|less\s+than|fewer\s+than|"
                         r"up\s+to|at\s+most|shy\s+of)|[<≤])\s*$", re.IGNORECASE)),
    ("about", re.compile(r"(?:\b(?:about|around|roughly|approximately|approx\.?|circa|some|"
                         r"close\s+to|an\s+estimated|on\s+the\s+order\s+of)|[~≈])\s*$",
                         re.IGNORECASE)),
]
# A hedge ends the 40 characters before a figure (trailing space aside) with one of these
# words or signs (the last word of each phrase above): cheaper to rule out than the three
# searches, whose ``$`` makes them try every position of the window.
_HEDGE_ENDINGS = (
    "over", "above", "exceeding", "than", "least", "of", ">", "≥",
    "under", "below", "nearly", "almost", "to", "most", "<", "≤",
    "about", "around", "roughly", "approximately", "approx", "approx.", "circa", "some",
    "estimated", "~", "≈")
# What IGNORECASE also takes for an ASCII letter and ``str.lower`` leaves alone.
_CASE_FOLDS = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s"})
_NOT_FIGURE_BEFORE = re.compile(
    r"(?:\bquer(?:y|ies)(?:[\s_-]?ids?)?\s*(?:#|no\.?|number|=|:)?\s*"
    r"(?:\d+\s*(?:,|and|&)\s*)*"
    r"|\bcharts?\s*#?\s*|#\s*)$",
    re.IGNORECASE)
_LIST_MARKER_AFTER = re.compile(r"[.)]\s")


@dataclass(frozen=True)
class Figure:
    """One figure as written. ``value`` includes the scale (``58.7k`` -> 58700.0) and the
    sign; a percentage keeps its written value (``12.3%`` -> 12.3, ``percent=True``).

    ``decimals`` counts the digits written after the decimal point and
    ``trailing_zeros`` the zeros ending an integer part written without them, which
    together say how precisely the figure was given (see :meth:`unit`). ``iso`` is
    the normalised ``YYYY-MM-DD``/``YYYY-MM`` of a date or ``HH:MM`` of a time.
    """

    text: str
    start: int
    value: float
    kind: Kind = "number"
    decimals: int = 0
    trailing_zeros: int = 0
    scale: float = 1.0
    percent: bool = False
    currency: str | None = None
    hedge: Hedge | None = None
    iso: str | None = None

    @property
    def end(self) -> int:
        return self.start + len(self.text)

    def unit(self) -> float:
        """The step of the last digit written, in the figure's own units (``12.6`` ->
        0.1, ``58.7k`` -> 100, ``59,000`` -> 1)."""
        return 10.0 ** -self.decimals * self.scale


def find_figures(text: str) -> list[Figure]:
    """Every figure in ``text``, in reading order (see the module doc for what counts)."""
    taken: list[tuple[int, int]] = [m.span() for m in _CHART_TOKEN.finditer(text)]
    figures: list[Figure] = []
    for figure in _dates_and_times(text):
        if not _overlaps(taken, figure.start, figure.end):
            figures.append(figure)
            taken.append((figure.start, figure.end))
    for match in _numbers(text):
        if _overlaps(taken, match.start(), match.end()):
            continue
        figure = _number(text, match)
        if figure is not None:
            figures.append(figure)
    return sorted(figures, key=lambda f: f.start)


def _numbers(text: str):
    """``_NUMBER.finditer(text)``, its search started near each digit: the pattern opens
    with optional parts (currency, sign), so a plain scan tries them at every character;
    a match starts at most ``_NUMBER_LEAD`` characters before its first digit."""
    pos = 0
    while (digit := _ANY_DIGIT.search(text, pos)) is not None:
        match = _NUMBER.search(text, max(pos, digit.start() - _NUMBER_LEAD))
        if match is None:  # never: the digit alone is a match
            return
        yield match
        pos = match.end()  # a match holds a digit: never empty


def parse_plain_number(text: str) -> float | None:
    """``text`` as a number when it is one bare number (``58665``, ``-12.5``, ``1e+20``,
    ``58,665``), else None. NaN and infinities are not numbers here."""
    cleaned = text.strip()
    try:
        value = float(cleaned)
    except ValueError:
        # Most cells are bare numbers (float takes them at once) or words: the grouping
        # pattern is only worth trying on a text that float refused.
        if not _GROUPED.fullmatch(cleaned):
            return None
        try:
            value = float(cleaned.replace(",", ""))
        except ValueError:  # a grouped figure with a minus sign float does not read
            return None
    return value if value == value and abs(value) != float("inf") else None


_GROUPED = re.compile(r"[-\u2212]?\d{1,3}(?:,\d{3})+(?:\.\d+)?")


def _overlaps(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    return any(start < s_end and s_start < end for s_start, s_end in spans)


def _dates_and_times(text: str) -> list[Figure]:
    found = []
    # Each pattern needs its separator: "-" (dates), "/" (US dates).
    for m in _DATE.finditer(text) if "-" in text else ():
        year, month, day = int(m.group(1)), int(m.group(2)), m.group(3)
        iso = f"{m.group(1)}-{m.group(2)}" + (f"-{day}" if day else "")
        if _valid_date(year, month, int(day) if day else 1):
            found.append(Figure(m.group(0), m.start(), float(year), "date", iso=iso))
    for m in _US_DATE.finditer(text) if "/" in text else ():
        month, day, year = int(m.group(1)), int(m.group(2)), int(m.group(3))
        if _valid_date(year, month, day):
            found.append(Figure(m.group(0), m.start(), float(year), "date",
                                iso=f"{year:04d}-{month:02d}-{day:02d}"))
    for m in _TIME.finditer(text):
        hour, minute = int(m.group(1)), int(m.group(2) or 0)
        meridiem = (m.group(3) or m.group(4) or "").lower()
        if meridiem and hour > 12:
            continue
        if meridiem == "p" and hour < 12:
            hour += 12
        elif meridiem == "a" and hour == 12:
            hour = 0
        if hour < 24 and minute < 60:
            found.append(Figure(m.group(0), m.start(), float(hour * 100 + minute), "time",
                                iso=f"{hour:02d}:{minute:02d}"))
    return found


def _valid_date(year: int, month: int, day: int) -> bool:
    try:
        dt.date(year, month, day)
    except ValueError:
        return False
    return True


def _number(text: str, m: re.Match) -> Figure | None:
    """The figure the ``_NUMBER`` match ``m`` reads as in ``text``, with what is written
    around it (sign, currency, suffix, percent, hedge); None when it is no figure: part
    of a name or identifier, or a label (see the module doc)."""
    lead = _lead(text, m)
    if lead is None:
        return None
    start, sign, currency = lead
    after = _AFTER.match(text, m.end())
    scale = _scale(after, currency)
    if scale is None or _skipped_context(text, start, m.end()):
        return None
    num = m.group("num")
    value, decimals, trailing = _written_digits(num)
    if sign:
        value = -value
    percent = bool(after.group("pct"))
    bare = not (sign or currency or percent or after.group("times")) and scale == 1.0
    kind: Kind = "year" if bare and _is_year(num, value) else "number"
    # The figure's text runs over what _AFTER read: nothing when it matched no part.
    return Figure(text[start:after.end()], start, value * scale, kind, decimals, trailing,
                  scale, percent, currency, _hedge(text, start))


def _lead(text: str, m: re.Match) -> tuple[int, str | None, str | None] | None:
    """Where the figure of ``m`` starts, its minus sign and its currency; None when its
    digits continue a word or an identifier ("N14228", "v1.2").

    A minus right after a letter or digit (currency not before it) is a hyphen: after a
    letter the number is part of a name ("COVID-19": None), after a digit it is the
    second number of a range ("10-20": unsigned, starting at its digits, no currency).
    """
    sign = m.group("sign")
    before = text[m.start() - 1] if m.start() else ""
    if sign and not m.group("cur"):
        if before.isalpha() or before == "_":
            return None
        if before.isalnum():
            return m.start("num"), None, None
    elif before and (before.isalnum() or before in "_."):
        return None
    return m.start(), sign, (m.group("cur") or m.group("cur2") or "").strip() or None


def _scale(after: re.Match, currency: str | None) -> float | None:
    """The multiplier written after the digits (``after``: the ``_AFTER`` match there):
    an attached suffix ("58.7k"; ``B``, ``T`` and ``m`` only after a ``currency``:
    "$2B"), else a scale word ("1.2 million"), else 1.0. None when letters glued to the
    digits make them no figure: an ordinal ("3rd"), a unit or an identifier ("9E")."""
    attached = after.group("attached")
    if attached:
        if attached in SUFFIXES:
            return SUFFIXES[attached]
        if currency and attached in CURRENCY_SUFFIXES:
            return CURRENCY_SUFFIXES[attached]
        return None
    word = after.group("word")
    return SCALE_WORDS[word.strip().lower()] if word else 1.0


def _written_digits(num: str) -> tuple[float, int, int]:
    """The value of the digits ``num`` (group separators dropped) and how precisely they
    were written: the digits after the point, and the zeros ending an integer written
    without a fraction ("59,000" -> 3; none for "0")."""
    digits = num.translate(_NO_SEPARATORS)
    integer, _, fraction = digits.partition(".")
    trailing = len(integer) - len(integer.rstrip("0")) if not fraction and integer.strip("0") else 0
    return float(digits), len(fraction), trailing


def _is_year(num: str, value: float) -> bool:
    """Whether bare digits ``num`` read as a year: four of them, from 1800 to 2100."""
    return _FOUR_DIGITS.fullmatch(num) is not None and 1800 <= value <= 2100


def _skipped_context(text: str, start: int, end: int) -> bool:
    """Query ids, chart references, ranks and list markers are labels, not figures."""
    before = text[max(0, start - 40):start].lower()
    # _NOT_FIGURE_BEFORE needs "quer", "chart" or "#" (ruled out first: cheaper than its
    # search, which tries every position)
    if ("#" in before or "quer" in before or "chart" in before) and \
            _NOT_FIGURE_BEFORE.search(text, max(0, start - 40), start):
        return True
    line_start = text.rfind("\n", 0, start) + 1
    return not text[line_start:start].strip() and bool(_LIST_MARKER_AFTER.match(text, end))


def _hedge(text: str, start: int) -> Hedge | None:
    window = text[max(0, start - 40):start]
    if not window.rstrip().translate(_CASE_FOLDS).lower().endswith(_HEDGE_ENDINGS):
        return None
    for name, pattern in _HEDGES:
        if pattern.search(window):
            return name
    return None
