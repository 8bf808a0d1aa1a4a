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

from collections import OrderedDict
from dataclasses import dataclass

from worker.result_sql import BoundedQuery

# A million characters: thousands of ordinary statements, or a few dozen of the longest.
MAX_PLAN_CHARS = 1_000_000


@dataclass(frozen=True)
class StatementPlan:
    """A statement as the guard cleaned it (``sql``), the names and DuckDB types of all its
    columns, and the bounded query that fetches its rows (``worker/result_sql.py``)."""

    sql: str
    columns: tuple[str, ...]
    types: tuple[str, ...]
    bounded: BoundedQuery

    def chars(self) -> int:
        return len(self.sql) + len(self.bounded.sql)


class StatementPlans:
    """Plans by the statement text as sent, least recently used dropped first."""

    def __init__(self, max_chars: int = MAX_PLAN_CHARS) -> None:
        self.max_chars = max_chars
        self._plans: OrderedDict[str, StatementPlan] = OrderedDict()
        self._chars = 0

    def get(self, text: object) -> StatementPlan | None:
        """The plan of ``text`` (any object: only strings have one), marked as just used."""
        plan = self._plans.get(text) if isinstance(text, str) else None
        if plan is not None:
            self._plans.move_to_end(text)  # type: ignore[arg-type]
        return plan

    def put(self, text: str, plan: StatementPlan) -> None:
        """Keep ``plan`` for ``text``; one larger than the whole budget is not kept."""
        size = len(text) + plan.chars()
        if size > self.max_chars:
            return
        old = self._plans.pop(text, None)
        if old is not None:
            self._chars -= len(text) + old.chars()
        self._plans[text] = plan
        self._chars += size
        while self._chars > self.max_chars:
            dropped_text, dropped = self._plans.popitem(last=False)
            self._chars -= len(dropped_text) + dropped.chars()

    def __len__(self) -> int:
        return len(self._plans)
