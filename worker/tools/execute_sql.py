"""``execute_sql``: the model's one tool, from its definition to the text of its result.

One ``SqlTool`` per job. A call's input is parsed here; a statement the job already
ran (keyed by its exact trimmed text) is answered from the job's cache with the
identical text and query id; a new one runs in the SQL sandbox within the job's time
left, gets the next query id (executed queries count from 1) and is rendered as the
CSV text of ``engine/sql/result_text.py``. Results are kept for charts, and
their text and SQL for the faithfulness check of the answer.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from engine.sql.result_text import result_text
from worker.tools.base import Tool, ToolContext, ToolRun

DEFINITION: dict[str, Any] = {
    "name": "execute_sql",
    "description": (
        "Run ONE read-only DuckDB SELECT statement against the analytics database and get "
        "the result as CSV. The first line is `query_id=<n> rows=<total> shown=<k>`. Results "
        "over 25 rows show only the first 25 rows, followed by `summary over all <total> rows`: "
        "count, total, min, max and avg of every numeric column computed over ALL rows. "
        "Repeating an identical statement returns the earlier result. Errors come back as "
        "`error: <message>`; fix the statement and try again."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "sql": {"type": "string", "description": "A single DuckDB SELECT statement."}
        },
        "required": ["sql"],
    },
}
# A query never gets less time than this, even at the very end of a job's budget.
MIN_QUERY_S = 0.5


class SqlTool(Tool):
    definition = DEFINITION

    def __init__(self, context: ToolContext) -> None:
        super().__init__(context)
        self._cache: dict[str, ToolRun] = {}
        self._next_query_id = 1

    def call(self, tool_input: Any) -> ToolRun:
        """Answer one ``{"sql": ...}`` call (see the module doc); never raises."""
        sql = tool_input.get("sql") if isinstance(tool_input, dict) else None
        if not isinstance(sql, str):
            return ToolRun.refused(self.name(), tool_input, "missing 'sql' string input")
        key = sql.strip()
        figures = self.context.figures
        cached = self._cache.get(key)
        if cached is not None:
            figures.sql_cache_hits += 1
            return dataclasses.replace(cached, cached=True)
        run = self._execute(key)
        figures.sql_executed += 1
        figures.sql_ms += int(run.ms)
        self._cache[key] = run
        return run

    def _execute(self, sql: str) -> ToolRun:
        context, query_id = self.context, self._next_query_id
        budget = min(context.settings.sql_timeout_s, max(MIN_QUERY_S, context.time_left()))
        result = context.sandbox.run(sql, timeout_s=budget, label=f"query_id={query_id}")
        text = result_text(result, query_id, context.settings.tool_result_format,
                           context.settings.tool_result_max_rows)
        if result.is_error:
            return ToolRun(self.name(), result.sql, text, is_error=True, error=result.error,
                           ms=result.ms)
        self.results[query_id] = result
        self._next_query_id += 1
        context.evidence.add_tool_result(text)
        context.evidence.add_sql(result.sql)
        return ToolRun(self.name(), result.sql, text, query_id=query_id,
                       rows=result.total_rows, ms=result.ms)
