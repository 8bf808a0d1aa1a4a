"""Execution accuracy: does the result Sunrise's answer relies on equal the gold result?

BIRD's EX semantics, with what a person would forgive and nothing more:

- rows are a multiset: duplicates count, and order matters only when ``ordered``
  (by default, when the gold SQL itself ends with ``ORDER BY``);
- column order and column names are ignored: the columns are matched by content
  (the same number of columns is required);
- NULL equals only NULL;
- two numbers agree when they are equal once rounded to the precision of the less
  precise of the two, at least two decimals (12.639071 and 12.64 agree, 12.6 and
  12.64 do not), or when they are within ``tolerance`` of each other, relative to
  the larger;
- strings must be equal; dates and times compare as ISO text; decimals as numbers.

Pure functions, no I/O.
"""
from __future__ import annotations

import datetime as dt
import decimal
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

MIN_DECIMALS = 2
# Matching rows one by one (when sorting cannot pair them, e.g. values within tolerance
# that sort differently) is quadratic; beyond this many rows the sorted pairing decides.
GREEDY_LIMIT = 2000
MAX_COLUMN_MAPPINGS = 5000


@dataclass(frozen=True)
class ResultSet:
    columns: list[str]
    rows: list[tuple]

    @classmethod
    def of(cls, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> ResultSet:
        """A result with every cell normalised (see :func:`normalise`)."""
        return cls([str(c) for c in columns], [tuple(normalise(v) for v in row) for row in rows])


@dataclass(frozen=True)
class Comparison:
    """The verdict, why, and the first rows that differ (as gold row / Sunrise row)."""

    equal: bool
    reason: str
    row_index: int | None = None
    gold_row: tuple | None = None
    sunrise_row: tuple | None = None


def normalise(value: Any) -> Any:
    """A cell as compared: None, bool, int, float, or str (dates and times as ISO text)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if isinstance(value, decimal.Decimal):
        return float(value) if value.is_finite() else None
    if isinstance(value, (dt.date, dt.time)):  # datetime is a date
        return value.isoformat()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    return str(value)


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def decimals_of(value: float | int) -> int:
    """Digits after the decimal point in the shortest text of ``value``."""
    if isinstance(value, int) or float(value).is_integer():
        return 0
    text = repr(float(value))
    if "e" in text:
        mantissa, exponent = text.split("e")
        return max(0, len(mantissa.partition(".")[2]) - int(exponent))
    return len(text.partition(".")[2])


def numbers_agree(gold: float, other: float, tolerance: float = 0.0) -> bool:
    """See the module doc: equal at the coarser precision (≥ 2 decimals), or within
    ``tolerance`` relative to the larger magnitude."""
    if gold == other:
        return True
    places = max(MIN_DECIMALS, min(decimals_of(gold), decimals_of(other)))
    if round(gold, places) == round(other, places):
        return True
    return tolerance > 0 and abs(gold - other) <= tolerance * max(abs(gold), abs(other))


def cells_equal(gold: Any, other: Any, tolerance: float = 0.0) -> bool:
    if gold is None or other is None:
        return gold is None and other is None
    if is_number(gold) and is_number(other):
        return numbers_agree(float(gold), float(other), tolerance)
    if isinstance(gold, bool) or isinstance(other, bool):
        return gold is other
    return str(gold) == str(other)


def compare_results(gold: ResultSet, sunrise: ResultSet, *, ordered: bool,
                    tolerance: float = 0.0) -> Comparison:
    """Compare two normalised results (see the module doc)."""
    width = len(gold.columns)
    if len(sunrise.columns) != width:
        return _first_difference(gold, sunrise, list(range(min(width, len(sunrise.columns)))),
                                 ordered, f"Sunrise's result has {len(sunrise.columns)} "
                                 f"column(s), the gold result {width}.")
    mappings = _column_mappings(gold, sunrise, tolerance)
    if isinstance(mappings, str):
        return _first_difference(gold, sunrise, list(range(width)), ordered,
                                 f"No column of Sunrise's result holds the values of the gold "
                                 f"column {mappings!r}.")
    if len(gold.rows) != len(sunrise.rows):
        return _first_difference(gold, sunrise, mappings[0], ordered,
                                 f"Sunrise's result has {len(sunrise.rows)} row(s), the gold "
                                 f"result {len(gold.rows)}.")
    for mapping in mappings:
        projected = _project(sunrise.rows, mapping)
        if _rows_equal(gold.rows, projected, ordered, tolerance):
            moved = "" if mapping == list(range(width)) else ", columns in another order"
            how = "in the same order" if ordered else "in any order"
            return Comparison(True, f"Same {len(gold.rows)} row(s), {how}{moved}.")
    order = "in order" if ordered else "as a multiset"
    return _first_difference(gold, sunrise, mappings[0], ordered,
                             f"The rows differ (compared {order}).")


def _project(rows: list[tuple], mapping: list[int]) -> list[tuple]:
    return [tuple(row[index] for index in mapping) for row in rows]


def _sort_key(row: tuple) -> tuple:
    return tuple((0, 0.0) if v is None else (1, float(v)) if is_number(v) or isinstance(v, bool)
                 else (2, str(v)) for v in row)


def _rows_equal(gold: list[tuple], other: list[tuple], ordered: bool, tolerance: float) -> bool:
    def same(a: tuple, b: tuple) -> bool:
        return all(cells_equal(x, y, tolerance) for x, y in zip(a, b, strict=True))

    if ordered:
        return all(same(a, b) for a, b in zip(gold, other, strict=True))
    if all(same(a, b) for a, b in zip(sorted(gold, key=_sort_key), sorted(other, key=_sort_key),
                                      strict=True)):
        return True
    if len(gold) > GREEDY_LIMIT:
        return False
    left = list(other)
    for row in gold:
        index = next((i for i, candidate in enumerate(left) if same(row, candidate)), None)
        if index is None:
            return False
        left.pop(index)
    return True


def _column_mappings(gold: ResultSet, sunrise: ResultSet,
                     tolerance: float) -> list[list[int]] | str:
    """Assignments of Sunrise's columns to the gold columns whose values agree as
    multisets, the identity first; else the name of a gold column no column matches."""
    width = len(gold.columns)
    if width == 0:
        return [[]]

    def column(rows: list[tuple], index: int) -> list:
        return sorted((row[index] for row in rows), key=lambda v: _sort_key((v,)))

    same_rows = len(gold.rows) == len(sunrise.rows)
    gold_columns = [column(gold.rows, i) for i in range(width)]
    sunrise_columns = [column(sunrise.rows, j) for j in range(width)]
    options = []
    for i in range(width):
        fits = [j for j in range(width) if not same_rows or all(
            cells_equal(a, b, tolerance) for a, b in zip(gold_columns[i], sunrise_columns[j],
                                                         strict=True))]
        if not fits:
            return gold.columns[i]
        options.append(sorted(fits, key=lambda j, i=i: (j != i, j)))
    mappings = []
    for combo in itertools.product(*options):
        if len(set(combo)) == width:
            mappings.append(list(combo))
            if len(mappings) >= MAX_COLUMN_MAPPINGS:
                break
    return mappings or gold.columns[0]


def _first_difference(gold: ResultSet, sunrise: ResultSet, mapping: list[int], ordered: bool,
                      reason: str) -> Comparison:
    """The verdict ``False`` with the first pair of rows (sorted unless ``ordered``) that
    differ, Sunrise's row shown in the gold column order where columns were matched."""
    gold_rows = gold.rows if ordered else sorted(gold.rows, key=_sort_key)
    if len(mapping) == len(gold.columns) == len(sunrise.columns):
        others = _project(sunrise.rows, mapping)
    else:
        others = list(sunrise.rows)
    others = others if ordered else sorted(others, key=_sort_key)
    for index in range(max(len(gold_rows), len(others))):
        g = gold_rows[index] if index < len(gold_rows) else None
        s = others[index] if index < len(others) else None
        if g is None or s is None or len(g) != len(s) or not all(
                cells_equal(a, b) for a, b in zip(g, s, strict=True)):
            return Comparison(False, reason, index, g, s)
    return Comparison(False, reason)
