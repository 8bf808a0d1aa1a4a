"""Numbers written for people: ``2,579``, ``8.102,58``, ``1 234 567``, ``1'234``, ``$2,493.24``,
``1.056,13 €``, ``(1,234.00)``, ``45.3%``, ``1.2M``.

A column's values are read under one *convention*: the decimal point (``1,234.5``;
thousands grouped by ``,``, a space or ``'``) or the decimal comma (``1.234,5``; grouped
by ``.``, a space or ``'``). Groups are strict (three digits, the first one to three
without a leading zero), so ``1,23,4`` and ``0123`` are not numbers under either and a
column of codes with leading zeros stays text. Around the digits a value may carry a
sign, a currency (before or after), parentheses for a negative amount, a trailing
``%`` or a ``k``/``M``/``B`` multiplier.

Each convention is one regular expression (written for both Python's ``re``, which
reads the sample, and DuckDB's RE2, which checks and converts the whole column) and
one SQL expression that turns a matching text into its number.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from engine.datasets.naming import sql_literal

_SPACES = "[ \u00a0\u202f]"
CURRENCY = ("(?:US\\$|A\\$|C\\$|R\\$|[$\u20ac\u00a3\u00a5\u20b9\u20bd\u20a9\u20ba\u20aa\u0e3f]"
            "|CHF|EUR|USD|GBP|JPY|SEK|NOK|DKK|PLN|CAD|AUD|INR|kr|z\u0142|K\u010d)")
# A multiplier after the number; the whole column must use them (see ``column_type``).
SCALE = "(?:k|K|M|Mio\\.?|Mrd\\.?|B|bn|Bn)"
# Longer suffixes first: "Mio" is no "M".
_EXPONENTS = (("Mrd", 9), ("bn", 9), ("Bn", 9), ("Mio", 6), ("k", 3), ("K", 3), ("M", 6), ("B", 9))
_SIGN = "[-+\u2212]?"


@dataclass(frozen=True)
class Convention:
    """How one column writes its numbers: ``decimal`` is "." or ","."""

    name: str
    decimal: str
    grouping: str

    @property
    def number(self) -> str:
        """The regular expression of the bare number (no sign, currency or suffix)."""
        d = re.escape(self.decimal)
        first = "[1-9][0-9]{0,2}"
        grouped = "|".join(f"{first}(?:{sep}[0-9]{{3}})+" for sep in self.grouping.split("|"))
        return f"(?:(?:{grouped}|[1-9][0-9]*|0)(?:{d}[0-9]+)?|{d}[0-9]+)"

    @property
    def pattern(self) -> str:
        """The regular expression a whole value (trimmed) of this convention matches."""
        core = (f"(?:{CURRENCY}{_SPACES}?)?{_SIGN}{self.number}(?:{_SPACES}?{SCALE})?"
                f"(?:{_SPACES}?{CURRENCY})?(?:{_SPACES}?%)?")
        return f"(?:{_SIGN}{core}|\\({core}\\)|{core}-)"

    @functools.cached_property
    def _regex(self) -> re.Pattern:
        # Built once: the sample check calls ``matches`` for every sampled value.
        return re.compile(self.pattern)

    def matches(self, value: str) -> bool:
        return self._regex.fullmatch(value) is not None

    def digits_sql(self, trimmed: str, *, words: bool = True) -> str:
        """SQL: the digits of ``trimmed`` with "." as the decimal point, unsigned.
        ``words``: first drop currency codes and multipliers, whose "." ("Mio.") is no
        decimal point (needless where no value has a multiplier)."""
        kept = "0-9" + re.escape(self.decimal)
        text = _without_words_sql(trimmed) if words else trimmed
        bare = f"regexp_replace({text}, '[^{kept}]', '', 'g')"
        return bare if self.decimal == "." else f"replace({bare}, ',', '.')"

    def value_sql(self, trimmed: str, sql_type: str, *, percent: bool, scaled: bool,
                  checked: bool = False) -> str:
        """SQL: ``trimmed`` as ``sql_type`` when it matches this convention, else NULL.
        ``checked``: every value is known to match (the import checked the whole column),
        so the match is not tried again. Percentages and multipliers shift the decimal
        exponent of the text, so that ``45.3%`` is the DOUBLE nearest 0.453 (not 45.3 / 100)."""
        digits = self.digits_sql(trimmed, words=scaled or not checked)
        if percent or scaled:
            shift = "-2" if percent else "0"
            if scaled:
                shift += " + CASE " + " ".join(
                    f"WHEN regexp_matches({trimmed}, {sql_literal(suffix + '[^A-Za-z]*$')}) "
                    f"THEN {exponent}" for suffix, exponent in _EXPONENTS) + " ELSE 0 END"
            digits = f"{digits} || 'e' || CAST({shift} AS VARCHAR)"
        number = f"TRY_CAST({digits} AS {sql_type})"
        negative = (f"(starts_with({trimmed}, '(') OR contains({trimmed}, '-') "
                    f"OR contains({trimmed}, '\u2212'))")
        value = f"CASE WHEN {negative} THEN -{number} ELSE {number} END"
        if checked:
            return value
        return f"CASE WHEN regexp_full_match({trimmed}, {sql_literal(self.pattern)}) THEN {value} END"


def _without_words_sql(trimmed: str) -> str:
    """SQL: ``trimmed`` without currency codes and multipliers, whose letters are no digits
    but whose "." ("Mio.") could be taken for a decimal point."""
    return f"regexp_replace({trimmed}, {sql_literal(CURRENCY + '|' + SCALE + '[.]?')}, '', 'g')"


DECIMAL_POINT = Convention("decimal_point", ".", f",|'|{_SPACES}")
DECIMAL_COMMA = Convention("decimal_comma", ",", f"\\.|'|{_SPACES}")
CONVENTIONS = (DECIMAL_POINT, DECIMAL_COMMA)

def currency_sql(trimmed: str) -> str:
    """SQL: the currency written in ``trimmed`` ('' when none)."""
    return f"regexp_extract({trimmed}, {sql_literal(CURRENCY)})"


def scaled_sql(trimmed: str) -> str:
    """SQL true when ``trimmed`` ends in a multiplier (``1.2M``, ``800 k``, ``€3 Mio.``)."""
    return f"regexp_matches({trimmed}, {sql_literal('[0-9]' + _SPACES + '?' + SCALE + '[.]?(' + _SPACES + '?' + CURRENCY + ')?$')})"


def percent_sql(trimmed: str) -> str:
    return f"ends_with({trimmed}, '%')"


def fraction_digits_sql(trimmed: str, convention: Convention) -> str:
    """SQL: how many digits ``trimmed`` has after its decimal separator (0 without one)."""
    d = re.escape(convention.decimal)
    return f"length(regexp_extract({trimmed}, {sql_literal(d + '([0-9]+)')}, 1))"


def format_name(convention: Convention, *, percent: bool = False, scaled: bool = False) -> str:
    """The format's name in the vocabulary (``formats``): "decimal_comma", "decimal_point_percent"."""
    return convention.name + ("_percent" if percent else "") + ("_scaled" if scaled else "")
