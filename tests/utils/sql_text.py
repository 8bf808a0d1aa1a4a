"""Run SQL in a sandbox and see it as the model would: the result with the text the SQL
tool renders for it under a given query id."""
from __future__ import annotations

import dataclasses
from typing import Any

from engine.sql.query_result import QueryResult
from engine.sql.result_text import result_text
from engine.sql.sandbox import SqlSandbox


@dataclasses.dataclass(frozen=True)
class Shown:
    """A ``QueryResult`` (its fields read through) and its tool-result ``text``."""

    result: QueryResult
    text: str

    def __getattr__(self, name: str) -> Any:
        return getattr(self.result, name)


def run_shown(sandbox: SqlSandbox, sql: str, query_id: int = 1, **run: Any) -> Shown:
    result = sandbox.run(sql, **run)
    return Shown(result, result_text(result, query_id))
