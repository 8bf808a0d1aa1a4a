"""The calendar years a database spans, so that "in 2013" in an answer about 2013 data is
not taken for a figure that needs a query behind it (``worker/answer/number_check.py``).

A year is "in the data" when it lies within the range of a date or timestamp column,
or of an integer column named ``year`` (or ``..._year``), of any table.
"""
from __future__ import annotations

import datetime as dt
import functools
import logging

import duckdb

from engine.sql.sandbox import SqlSandbox

logger = logging.getLogger(__name__)

TEMPORAL_TYPES = frozenset({"DATE", "TIMESTAMP", "TIMESTAMP WITH TIME ZONE", "TIMESTAMPTZ",
                            "TIMESTAMP_S", "TIMESTAMP_MS", "TIMESTAMP_NS", "DATETIME"})
INTEGER_TYPES = frozenset({"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT",
                           "USMALLINT", "UINTEGER", "UBIGINT"})
# A wider span is more likely a sentinel (0001-01-01, 9999-12-31) than history.
MAX_SPAN_YEARS = 300


def data_years(sandbox: SqlSandbox) -> frozenset[int]:
    """Every year between the minimum and maximum of each year-bearing column: from the
    sandbox's own ``data_years()`` when it has one (a live dataset's handle reads its
    version's profile: no query on the source), else queried (``_queried_years``)."""
    own = getattr(sandbox, "data_years", None)
    return own() if callable(own) else _queried_years(sandbox)


def profile_years(tables) -> frozenset[int]:
    """The years within the profiled min and max of each year-bearing column of
    ``tables`` (``TableProfile``s; values as stored: dates, numbers or ISO text)."""
    years: set[int] = set()
    for table in tables:
        for column in table.columns:
            if _bears_years(column.name, column.type):
                first, last = _year(column.min), _year(column.max)
                if first is not None and last is not None and 0 <= last - first <= MAX_SPAN_YEARS:
                    years.update(range(first, last + 1))
    return frozenset(years)


@functools.lru_cache(maxsize=32)
def _queried_years(sandbox: SqlSandbox) -> frozenset[int]:
    """Every year between the minimum and maximum of each year-bearing column.

    Cached per sandbox (its file is read-only). One ``min``/``max`` query per table
    through the sandbox; a query that fails is logged and its table skipped, so this
    never raises for the data's sake.
    """
    years: set[int] = set()
    try:
        schema = sandbox.describe_schema()
    except (duckdb.Error, RuntimeError) as exc:
        logger.warning("years of the data not read: %s", exc)
        return frozenset()
    for table, columns in schema:
        picked = [name for name, type_name in columns if _bears_years(name, type_name)]
        if not picked:
            continue
        stats = ", ".join(f"min({_quote(c)}), max({_quote(c)})" for c in picked)
        source = ".".join(_quote(part) for part in table.split("."))
        result = sandbox.run(f"SELECT {stats} FROM {source}", label=f"years of {table}")
        if result.is_error or not result.rows:
            logger.warning("years of %s not read: %s", table, result.error)
            continue
        row = result.rows[0]
        for low, high in zip(row[::2], row[1::2], strict=True):
            first, last = _year(low), _year(high)
            if first is not None and last is not None and 0 <= last - first <= MAX_SPAN_YEARS:
                years.update(range(first, last + 1))
    return frozenset(years)


def _bears_years(name: str, type_name: str) -> bool:
    base = type_name.split("(", 1)[0].strip().upper()
    lowered = name.lower()
    return base in TEMPORAL_TYPES or (base in INTEGER_TYPES
                                      and (lowered == "year" or lowered.endswith("_year")))


def _year(value: object) -> int | None:
    if isinstance(value, (dt.date, dt.datetime)):
        return value.year
    if isinstance(value, str) and len(value) >= 5 and value[:4].isdigit() and value[4] == "-":
        value = int(value[:4])
    if isinstance(value, int) and 1000 <= value <= 2999:
        return value
    return None


def _quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'
