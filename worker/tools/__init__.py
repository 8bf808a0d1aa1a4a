"""The tools the model can call, behind one small registry.

The loop knows tools only through ``ToolBox``: their definitions for the request, a
call by name, and the results charts can plot. Each tool is one module here (see
``base.Tool``); adding one is that module plus its line in ``TOOLS``. The order of
``TOOLS`` is the order of the request's tools list, which is part of the cached prompt
prefix: append, do not reorder.
"""
from __future__ import annotations

from typing import Any

from engine.sql.query_result import QueryResult
from worker.tools.base import Tool, ToolContext, ToolRun
from worker.tools.execute_sql import SqlTool

TOOLS: tuple[type[Tool], ...] = (SqlTool,)


def definitions() -> list[dict[str, Any]]:
    """Every tool's definition, as the request's ``tools`` list."""
    return [tool.definition for tool in TOOLS]


class ToolBox:
    """The tools of one job, each built from the job's ``context``."""

    def __init__(self, context: ToolContext) -> None:
        self._tools = {tool.name(): tool(context) for tool in TOOLS}

    def call(self, name: str, tool_input: Any) -> ToolRun:
        """Run one call of the tool ``name``; an unknown name is an error for the model."""
        tool = self._tools.get(name)
        if tool is None:
            return ToolRun.refused(name, tool_input, f"unknown tool {name!r}; the tools are "
                                   f"{', '.join(self._tools)}")
        return tool.call(tool_input)

    def chart_sources(self) -> dict[int, QueryResult]:
        """The results the job's charts may plot, by query id."""
        return {query_id: result for tool in self._tools.values()
                for query_id, result in tool.results.items()}


__all__ = ["TOOLS", "Tool", "ToolBox", "ToolContext", "ToolRun", "definitions"]
