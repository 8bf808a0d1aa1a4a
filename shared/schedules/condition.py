"""A schedule's condition: ``{"sql", "op", "value"}``, the first cell of the SQL's result
compared with ``value``. The one owner of the operators."""
from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le,
    "==": operator.eq, "!=": operator.ne}


def first_number(rows: list[tuple], columns: list[str]) -> float:
    """The first cell of a result as a number; ValueError says why it is not one."""
    if not columns or not rows:
        raise ValueError("the condition's SQL returned no rows; it must return one number")
    cell: Any = rows[0][0]
    if isinstance(cell, bool) or cell is None:
        raise ValueError(f"the condition's SQL returned {cell!r}, not a number")
    try:
        return float(cell)
    except (TypeError, ValueError):
        raise ValueError(f"the condition's SQL returned {str(cell)[:80]!r}, not a number") from None


def holds(condition: dict[str, Any], value: float) -> bool:
    """Whether ``value`` <op> ``condition["value"]``."""
    return OPERATORS[condition["op"]](value, float(condition["value"]))
