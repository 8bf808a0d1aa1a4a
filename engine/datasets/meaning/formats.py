"""The formats vocabulary: how a column's text is read, by name.

An import records the format it read a column with (``ColumnProfile.format``), and a
person re-typing a column names one; both use these names:

- numbers: ``decimal_point`` (``1,234.5``) or ``decimal_comma`` (``1.234,5``), either
  followed by ``_percent`` (``45.3%`` read as the fraction 0.453) and/or ``_scaled``
  (``1.2M`` read as 1200000): ``decimal_comma_percent``. Thousands may be grouped by a
  space or ``'`` too; a currency, a sign or parentheses may surround the number.
- dates and times: a ``strptime`` format such as ``%d/%m/%Y``, ``%m/%d/%Y``,
  ``%d.%m.%Y``, ``%d-%b-%Y``, ``%b %d %Y`` (an optional time of day is read too for
  the formats an import records), or ``iso`` (ISO 8601, the default);
- booleans: ``yes/no`` (also y/n, ja/nein, oui/non, true/false, 1/0; the default).

Several date formats an import found in one column are joined by `` | ``; a person
gives one.
"""
from __future__ import annotations

import re

from engine.datasets.meaning import dates, numbers
from engine.datasets.meaning.missing import missing_sql, trimmed_sql

_NUMBER = re.compile(r"^(?P<convention>decimal_point|decimal_comma)(?P<percent>_percent)?"
                     r"(?P<scaled>_scaled)?$")
NUMBER_TYPES = ("BIGINT", "INTEGER", "SMALLINT", "HUGEINT", "DOUBLE", "FLOAT", "REAL")
DATE_TYPES = ("DATE", "TIMESTAMP")
_TRUE = ("yes", "y", "ja", "j", "oui", "si", "s\u00ed", "true", "t", "1", "x")
_FALSE = ("no", "n", "nein", "non", "false", "f", "0")


def number_formats() -> tuple[str, ...]:
    """Every number format's name."""
    return tuple(numbers.format_name(c, percent=p, scaled=s) for c in numbers.CONVENTIONS
                 for p in (False, True) for s in (False, True))


def conversion_sql(text_sql: str, sql_type: str, format: str | None = None) -> str:
    """SQL reading the VARCHAR ``text_sql`` as ``sql_type`` with ``format``: NULL for a
    missing-value marker and for a value that does not read (``missing_sql`` on
    ``trimmed_sql(text_sql)`` tells the two apart). Raises ``ValueError`` naming the
    formats when ``format`` is not one for ``sql_type``."""
    trimmed = trimmed_sql(text_sql)
    base = sql_type.split("(")[0].strip().upper()
    if base in NUMBER_TYPES or base == "DECIMAL":
        value = _number_sql(trimmed, sql_type, format)
    elif base in DATE_TYPES:
        value = f"CAST({_date_sql(trimmed, format)} AS {sql_type})"
    elif base == "BOOLEAN":
        if format not in (None, "yes/no"):
            raise ValueError(f"format {format!r} is not one for BOOLEAN; use yes/no.")
        yes, no = (", ".join(f"'{v}'" for v in words) for words in (_TRUE, _FALSE))
        value = (f"CASE WHEN lower({trimmed}) IN ({yes}) THEN true "
                 f"WHEN lower({trimmed}) IN ({no}) THEN false END")
    elif base == "VARCHAR":
        return text_sql
    else:
        raise ValueError(f"type {sql_type} cannot be read from text.")
    return f"(CASE WHEN {missing_sql(trimmed)} THEN NULL ELSE {value} END)"


def _number_sql(trimmed: str, sql_type: str, format: str | None) -> str:
    match = _NUMBER.match(format or "decimal_point")
    if match is None:
        raise ValueError(f"format {format!r} is not one for numbers; use one of "
                         f"{', '.join(number_formats())}.")
    convention = next(c for c in numbers.CONVENTIONS if c.name == match["convention"])
    percent, scaled = bool(match["percent"]), bool(match["scaled"])
    # Scaled and percent values are computed as DOUBLE first: 12.5% of a BIGINT is no BIGINT.
    if percent or scaled:
        value = convention.value_sql(trimmed, "DOUBLE", percent=percent, scaled=scaled)
        return f"TRY_CAST({value} AS {sql_type})"
    return convention.value_sql(trimmed, sql_type, percent=False, scaled=False)


def _date_sql(trimmed: str, format: str | None) -> str:
    if format in (None, "iso"):
        return f"TRY_CAST({trimmed} AS TIMESTAMP)"
    rules = [dates.rule_named(name.strip()) for name in format.split("|")]
    if all(rules) and len(rules) > 1:
        cases = " ".join(f"WHEN {shape.match_sql(trimmed)} THEN {rule.value_sql(trimmed)}"
                         for rule in rules for shape in dates.SHAPES if rule in shape.rules)
        return f"CASE {cases} END"
    if rules[0] is not None:
        return rules[0].value_sql(trimmed)
    if "%" not in format:
        raise ValueError(f"format {format!r} is not one for dates: give a strptime format "
                         "such as %d/%m/%Y, or iso.")
    return f"try_strptime({trimmed}, {_literal(format)})"


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
