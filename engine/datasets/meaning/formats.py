"""The formats vocabulary as SQL: how a text value written in a format becomes a typed
value, and which texts mean "no value".

A minimal version written by the "retype" work for ``cast_sql``/``missing_sql`` (the
"meaning" work owns this module and its full vocabulary). Both build DuckDB SQL
expressions over an expression of the caller's; nothing here runs SQL.

Formats: None (DuckDB's own reading of the text), ``"decimal_comma"`` (``1.234,56``),
``"decimal_point"`` (``1,234.56``), or a ``strptime`` pattern for dates and timestamps
(``"%d.%m.%Y"``). Currency signs, spaces and a trailing ``%`` around a number are
ignored under the number formats.
"""
from __future__ import annotations

# Written in a cell of a column of numbers or dates, these mean "no value" (compared
# trimmed and lower-cased).
MISSING_MARKERS = ("", "na", "n/a", "null", "none", "-", "–", "?", "#n/a", "nan")
NUMBER_FORMATS = {"decimal_comma": (".", ","), "decimal_point": (",", ".")}
_NUMERIC_TYPES = ("DECIMAL", "DOUBLE", "BIGINT")
_TEMPORAL_TYPES = ("DATE", "TIMESTAMP")
# Characters around a number that are not part of it: currency signs and spaces.
_NOISE = "$€£¥ \u00a0\u202f'"


def literal(text: str) -> str:
    """``text`` as a SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def missing_sql(expr: str) -> str:
    """A boolean SQL expression: ``expr`` (text) is a missing-value marker or NULL."""
    markers = ", ".join(literal(m) for m in MISSING_MARKERS)
    return f"(({expr}) IS NULL OR lower(trim(({expr})::VARCHAR)) IN ({markers}))"


def check_format(type_: str, format_: str | None) -> None:
    """Raise ValueError when ``format_`` does not apply to ``type_``."""
    if format_ is None:
        return
    base = type_.split("(")[0]
    if format_ in NUMBER_FORMATS and base in _NUMERIC_TYPES:
        return
    if "%" in format_ and base in _TEMPORAL_TYPES:
        return
    raise ValueError(f"format {format_!r} does not apply to {type_}; for numbers use "
                     f"{' or '.join(NUMBER_FORMATS)}, for dates a strptime pattern such "
                     "as %d.%m.%Y")


def cast_sql(expr: str, type_: str, format_: str | None = None) -> str:
    """A SQL expression: ``expr`` (text) read as ``type_`` in ``format_``, NULL where it
    does not convert (never an error). Raises ValueError for a format the type does not
    take (``check_format``)."""
    check_format(type_, format_)
    text = f"trim(({expr})::VARCHAR)"
    if format_ in NUMBER_FORMATS:
        thousands, decimal = NUMBER_FORMATS[format_]
        bare = f"translate({text}, {literal(_NOISE + thousands)}, '')"
        if decimal != ".":
            bare = f"replace({bare}, {literal(decimal)}, '.')"
        return f"TRY_CAST(regexp_replace({bare}, '%$', '') AS {type_})"
    if format_ is not None:
        return f"TRY_CAST(TRY_STRPTIME({text}, {literal(format_)}) AS {type_})"
    return f"TRY_CAST({text} AS {type_})"
