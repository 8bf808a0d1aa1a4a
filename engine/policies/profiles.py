"""A version's profile as one principal may see it: what the system prompt is built from.

A profile (row counts, each column's top values, min and max, distinct count) describes
every row; under a policy it would name rows the principal may not see (another
region, in a value hint). So for each table a policy or mask binds, the figures are
recomputed through the principal's ``PolicedQueries`` -- the row count, and the top
values of each text column the prompt would list -- and the rest are dropped (min,
max, and everything about a masked column). A figure that cannot be recomputed is
dropped, never kept.
"""
from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from typing import Any

from engine.datasets.profile import ColumnProfile, TableProfile, TopValue

logger = logging.getLogger(__name__)

# Above the prompt's hint limit (25 values): a column with more gives no hint.
_MAX_VALUES = 26


def policed_profiles(tables: Sequence[TableProfile], handle: Any) -> list[TableProfile]:
    """``tables`` with the figures of every table ``handle.applied`` binds recomputed
    through ``handle`` (a ``PolicedQueries``) or dropped (module doc)."""
    bound = {name.lower() for name in handle.applied.tables()}
    masked = {(m.table.lower(), m.column.lower()) for m in handle.applied.masks}
    out = []
    for table in tables:
        if table.name.lower() not in bound:
            out.append(table)
            continue
        rows = _scalar(handle, f"SELECT count(*) FROM {_quote(table.name)}")
        columns = tuple(_column(handle, table.name, column,
                                (table.name.lower(), column.name.lower()) in masked)
                        for column in table.columns)
        out.append(dataclasses.replace(table, rows=rows or 0, columns=columns))
    return out


def _column(handle: Any, table: str, column: ColumnProfile, masked: bool) -> ColumnProfile:
    bare = dataclasses.replace(column, min=None, max=None, top_values=(), distinct=0,
                               suggestion=None)
    if masked or not column.text or not column.top_values:
        return bare
    result = handle.run(f"SELECT {_quote(column.name)} AS v, count(*) AS n FROM "
                        f"{_quote(table)} WHERE {_quote(column.name)} IS NOT NULL "
                        f"GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT {_MAX_VALUES}")
    if result.is_error:
        logger.warning("policed profile of %s.%s: %s", table, column.name, result.error)
        return bare
    values = tuple(TopValue(value, count) for value, count in result.rows)
    return dataclasses.replace(bare, top_values=values[:_MAX_VALUES - 1],
                               distinct=len(values))


def _scalar(handle: Any, sql: str) -> int | None:
    result = handle.run(sql)
    if result.is_error or not result.rows:
        return None
    return result.rows[0][0]


def _quote(name: str) -> str:
    return ".".join('"' + part.replace('"', '""') + '"' for part in name.split("."))
