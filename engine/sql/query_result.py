"""What the SQL sandbox hands back for one query: data only, never text.

The SQL tool (``worker/tools/execute_sql.py``) turns a result into the text the model
reads; charts plot its rows; the faithfulness check reads that text. The bounds below
are how much of a result leaves DuckDB at all (``engine/sql/result_sql.py`` cuts it there).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from shared.text_limits import ERROR_CHARS, clip

# Rows shown in full; past it the sandbox also summarises the whole result.
SHOWN_ROWS = 25
# Characters of a cell kept; a longer value is cut inside DuckDB.
MAX_CELL_CHARS = 1000
# Columns kept (and summarised) of a wider result.
MAX_COLUMNS = 100


class CutText(str):
    """A cell's text, already cut to ``MAX_CELL_CHARS + 1`` characters by DuckDB (a
    value too long to fetch whole); rendered like any text, with the ellipsis."""

    __slots__ = ()


@dataclass(frozen=True)
class ColumnSummary:
    """Statistics of one numeric-looking column over the whole result."""

    column: str
    count: int
    total: Any
    min: Any
    max: Any
    avg: Any


@dataclass(frozen=True)
class QueryResult:
    """One query as the sandbox ran (or refused) it.

    ``rows`` holds at most the sandbox's ``chart_row_limit`` rows of the ``total_rows``
    the whole result has; ``columns`` (with their DuckDB ``types``) at most
    ``MAX_COLUMNS`` of ``total_columns``. ``summary`` covers every row, computed when
    the result has more than ``SHOWN_ROWS``. A failed query has ``error`` set, and
    ``retryable`` when the failure was not the statement's (a live source or its query
    slots out of reach for now): the same statement may well succeed a moment later.
    """

    sql: str
    columns: list[str]
    rows: list[tuple]
    total_rows: int
    is_error: bool
    error: str | None
    ms: float
    types: list[str] = field(default_factory=list)
    summary: list[ColumnSummary] | None = None
    total_columns: int = 0
    retryable: bool = False

    @classmethod
    def failed(cls, sql: str, message: str, ms: float, *,
               retryable: bool = False) -> QueryResult:
        """A failed query; the message is cut to ``ERROR_CHARS`` (its head says what
        went wrong; a query can make it any size)."""
        return cls(sql, [], [], 0, True, clip(message, ERROR_CHARS), ms,
                   retryable=retryable)
