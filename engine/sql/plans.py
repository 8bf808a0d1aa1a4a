"""What one SQL process has learned about a statement text: the guard's verdict and its
binding, kept so that the same text sent again (another job asking the same question)
runs without parsing, checking and binding it again.

A ``StatementPlan`` depends only on the text and on the database, which a SQL process
opens read-only with its configuration locked for its whole life, so a plan never
goes stale. Only statements that passed the guard and bound are kept; refusals and
errors are worked out again each time (they are rare, and cheap to redo).

``StatementPlans`` holds at most ``max_chars`` characters of statement text (a
statement may be 50,000), dropping the least recently used first. One thread.
"""
from __future__ import annotations

from dataclasses import dataclass

from cachetools import LRUCache

from engine.sql.result_sql import BoundedQuery

# A million characters: thousands of ordinary statements, or a few dozen of the longest.
MAX_PLAN_CHARS = 1_000_000


@dataclass(frozen=True)
class StatementPlan:
    """A statement as the guard cleaned it (``sql``), the names and DuckDB types of all its
    columns, the bounded query that fetches its rows and, if the statement is to run
    once for its rows and its summary, the query doing both (``engine/sql/result_sql.py``)."""

    sql: str
    columns: tuple[str, ...]
    types: tuple[str, ...]
    bounded: BoundedQuery
    one_pass: BoundedQuery | None = None

    def chars(self) -> int:
        return len(self.sql) + len(self.bounded.sql) + len(getattr(self.one_pass, "sql", ""))


class StatementPlans:
    """Plans by the statement text as sent, least recently used dropped first (a
    ``cachetools.LRUCache`` weighed in characters: the text's and its plan's)."""

    def __init__(self, max_chars: int = MAX_PLAN_CHARS) -> None:
        self._plans: LRUCache[str, tuple[int, StatementPlan]] = LRUCache(
            max_chars, getsizeof=lambda entry: entry[0])

    def get(self, text: object) -> StatementPlan | None:
        """The plan of ``text`` (any object: only strings have one), marked as just used."""
        entry = self._plans.get(text) if isinstance(text, str) else None
        return entry[1] if entry is not None else None

    def put(self, text: str, plan: StatementPlan) -> None:
        """Keep ``plan`` for ``text``; one larger than the whole budget is not kept."""
        size = len(text) + plan.chars()
        if size <= self._plans.maxsize:
            self._plans[text] = (size, plan)

    def __len__(self) -> int:
        return len(self._plans)
