"""Missing-value markers: the texts a person writes in a cell that has no value.

In a column whose other values are numbers or dates these are NULL (``N/A``, ``-``,
``#N/A``...), compared case-insensitively after trimming. In a column that stays text
they stay what they are: there they may be a value ("NA" for North America).
"""
from __future__ import annotations

from engine.datasets.naming import sql_literal

# Lower-case; the empty text is missing too. "-" and dashes are what spreadsheets and
# reports put in an empty cell; "#n/a" and the other "#..." texts are Excel's errors,
# written out as text by an export; "#nv" is German Excel's #N/A.
MARKERS = ("", "n/a", "na", "n.a.", "null", "none", "nil", "nan", "-", "--", "\u2013",
           "\u2014", "?", "#n/a", "#nv", "#na", "#value!", "#ref!", "#div/0!", "#num!",
           "#name?", "#null!", "missing", "unknown")

_MARKER_SET = frozenset(MARKERS)

# What trimming removes around a value: spaces, tabs and the no-break spaces spreadsheets
# put around amounts.
BLANKS = " \t\r\n\u00a0\u202f"


def is_missing(value: str) -> bool:
    """Whether ``value`` (a cell's text) is a missing-value marker."""
    return value.strip(BLANKS).lower() in _MARKER_SET


def present(values) -> list[str]:
    """``values`` (cells' texts or None) trimmed, without NULLs and missing-value markers."""
    trimmed = (v.strip(BLANKS) for v in values if v is not None)
    return [v for v in trimmed if v.lower() not in _MARKER_SET]


def trimmed_sql(expr: str) -> str:
    """SQL for ``expr`` (a VARCHAR) without the blanks around it."""
    return f"trim({expr}, {sql_literal(BLANKS)})"


def missing_sql(trimmed: str) -> str:
    """SQL true when ``trimmed`` (see ``trimmed_sql``) is NULL or a missing-value marker."""
    markers = ", ".join(sql_literal(m) for m in MARKERS)
    # The length first: most values are longer than any marker and skip lower().
    longest = max(map(len, MARKERS))
    return (f"({trimmed} IS NULL OR (length({trimmed}) <= {longest} "
            f"AND lower({trimmed}) IN ({markers})))")
