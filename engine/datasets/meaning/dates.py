"""Dates written for people: ``Jan 1 2000``, ``01-Jan-2000``, ``31/01/2024``, ``01/31/2024``,
``31.01.2024``, ISO text (``2024-01-31``, ``2024-01-31T10:00:00``), each with an optional
time of day.

A value has a *shape* (its digits, separators and month names), and a shape one or two
*rules* that read it: ``31/01/2024`` is day first (``%d/%m/%Y``) or month first
(``%m/%d/%Y``). A column converts when every value has a shape and, for each shape in
it, one rule reads all of its values: so a column mixing ISO and day-first dates
converts, and one whose slashed dates all have a day of at most 12 is ambiguous
(decided by the other columns, else left text with a warning). Shapes are regular
expressions (Python's ``re`` for the sample, DuckDB's RE2 for the whole column); rules
are ``strptime`` formats, tried with DuckDB's ``try_strptime``.
"""
from __future__ import annotations

import datetime as dt
import functools
import re
from dataclasses import dataclass

from engine.datasets.naming import sql_literal

_TIME = "(?:[ T][0-9]{1,2}:[0-9]{2}(?::[0-9]{2}(?:[.][0-9]+)?)?(?: ?[AaPp][Mm])?)?"
_TIME_FORMATS = ("", " %H:%M", " %H:%M:%S", " %H:%M:%S.%f", " %I:%M %p", " %I:%M:%S %p",
                 " %I:%M%p", "T%H:%M:%S", "T%H:%M")
_ISO_TIME = "(?:[ T][0-9]{1,2}:[0-9]{2}(?::[0-9]{2}(?:[.][0-9]+)?)?(?:Z|[+-][0-9]{2}:?[0-9]{2})?)?"


@dataclass(frozen=True)
class Rule:
    """One way to read a shape: ``name`` is its format as people and the API write it
    ("%d/%m/%Y"); ``order`` is "day" or "month" where the shape has both (else None)."""

    name: str
    order: str | None = None
    formats: tuple[str, ...] = ()

    def value_sql(self, trimmed: str, formats: tuple[str, ...] | None = None) -> str:
        """SQL: ``trimmed`` as a TIMESTAMP under this rule, NULL when it does not read;
        ``formats``: only these full formats (see ``formats_reading``)."""
        if not self.formats:  # ISO: DuckDB's own cast reads every ISO 8601 variant
            return f"TRY_CAST({trimmed} AS TIMESTAMP)"
        full = formats or tuple(f + t for f in self.formats for t in _TIME_FORMATS)
        return f"try_strptime({trimmed}, [{', '.join(sql_literal(f) for f in full)}])"

    def formats_reading(self, values: list[str]) -> tuple[str, ...] | None:
        """The full formats (with a time of day) of this rule that read every one of
        ``values`` (with Python's ``strptime``, whose codes DuckDB's share), first used
        first; None if a value reads under none. ISO needs none: ``()``."""
        if not self.formats:
            return ()
        used: list[str] = []
        for value in values:
            found = next((f for f in used if _reads(value, f)), None) or next(
                (f + t for f in self.formats for t in _TIME_FORMATS if _reads(value, f + t)), None)
            if found is None:
                return None
            if found not in used:
                used.append(found)
        return tuple(used)


def _reads(value: str, fmt: str) -> bool:
    try:
        dt.datetime.strptime(value, fmt)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class Shape:
    name: str
    pattern: str
    rules: tuple[Rule, ...]

    @functools.cached_property
    def _regex(self) -> re.Pattern:
        # Built once: the sample check calls ``matches`` for every sampled value.
        return re.compile(self.pattern)

    def matches(self, value: str) -> bool:
        return self._regex.fullmatch(value) is not None

    def match_sql(self, trimmed: str) -> str:
        return f"regexp_full_match({trimmed}, {sql_literal(self.pattern)})"


def _orders(day_first: str, month_first: str) -> tuple[Rule, Rule]:
    return (Rule(day_first, "day", (day_first,)), Rule(month_first, "month", (month_first,)))


_MONTH = "[A-Za-z]{3,9}[.]?"
SHAPES = (
    Shape("iso", f"[0-9]{{4}}-[0-9]{{1,2}}-[0-9]{{1,2}}{_ISO_TIME}", (Rule("%Y-%m-%d"),)),
    Shape("ymd_slash", f"[0-9]{{4}}/[0-9]{{1,2}}/[0-9]{{1,2}}{_TIME}",
          (Rule("%Y/%m/%d", None, ("%Y/%m/%d",)),)),
    Shape("slash", f"[0-9]{{1,2}}/[0-9]{{1,2}}/[0-9]{{4}}{_TIME}", _orders("%d/%m/%Y", "%m/%d/%Y")),
    Shape("slash_yy", f"[0-9]{{1,2}}/[0-9]{{1,2}}/[0-9]{{2}}{_TIME}",
          _orders("%d/%m/%y", "%m/%d/%y")),
    Shape("dash", f"[0-9]{{1,2}}-[0-9]{{1,2}}-[0-9]{{4}}{_TIME}", _orders("%d-%m-%Y", "%m-%d-%Y")),
    Shape("dot", f"[0-9]{{1,2}}[.][0-9]{{1,2}}[.][0-9]{{2}}(?:[0-9]{{2}})?{_TIME}",
          (Rule("%d.%m.%Y", "day", ("%d.%m.%Y", "%d.%m.%y")),)),
    Shape("day_month_name", f"[0-9]{{1,2}}[.]?[- ]{_MONTH}[- ][0-9]{{2}}(?:[0-9]{{2}})?{_TIME}",
          (Rule("%d-%b-%Y", None, ("%d-%b-%Y", "%d %b %Y", "%d-%B-%Y", "%d %B %Y", "%d. %B %Y",
                                   "%d-%b-%y", "%d %b %y", "%d. %b %Y")),)),
    Shape("month_name_day", f"{_MONTH} [0-9]{{1,2}},? [0-9]{{4}}{_TIME}",
          (Rule("%b %d %Y", None, ("%b %d %Y", "%b %d, %Y", "%B %d %Y", "%B %d, %Y",
                                   "%b. %d %Y", "%b. %d, %Y")),)),
)

def shape_of(value: str) -> Shape | None:
    """The shape ``value`` (trimmed) has, if any."""
    return next((shape for shape in SHAPES if shape.matches(value)), None)


def rule_named(name: str) -> Rule | None:
    """The rule whose format is ``name`` ("%d/%m/%Y"), if one is known."""
    return next((rule for shape in SHAPES for rule in shape.rules if rule.name == name), None)


def has_time_sql(trimmed: str) -> str:
    """SQL true when ``trimmed`` carries a time of day."""
    return f"contains({trimmed}, ':')"
