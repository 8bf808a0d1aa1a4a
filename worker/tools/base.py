"""What every tool is, gets and gives back.

A tool is a ``Tool`` subclass: a constant ``definition`` (the name, description and
input schema sent with every request, unchanged so the prompt cache holds) and
``call(tool_input) -> ToolRun``. The loop builds one instance per job from the job's
``ToolContext``, so a tool may keep per-job state (a cache, numbering). A tool never
raises for a bad call: it answers with an error ``ToolRun`` the model can act on.
"""
from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any, ClassVar

from engine.sql.query_result import QueryResult
from engine.sql.sandbox import SqlSandbox
from shared.config import Settings
from shared.usage_figures import JobFigures
from worker.answer.number_check import Evidence


@dataclasses.dataclass(frozen=True)
class ToolContext:
    """What a job gives its tools: its data, settings, figures and what the model saw.

    ``figures`` are the job's usage figures (a tool counts its own work there);
    ``evidence`` collects what the faithfulness check may find figures in;
    ``time_left()`` is the job's remaining time budget in seconds.
    """

    sandbox: SqlSandbox
    settings: Settings
    figures: JobFigures
    evidence: Evidence
    time_left: Callable[[], float]


@dataclasses.dataclass(frozen=True)
class ToolRun:
    """One call of a tool: what the model gets back, and what the job's trace records.

    ``input_text`` is the call's input as a person reads it (the SQL, for
    ``execute_sql``); ``text`` the tool result's content. ``query_id`` names a result
    a chart can plot (see ``Tool.results``); ``cached`` says the answer was reused.
    """

    tool: str
    input_text: str
    text: str
    is_error: bool = False
    error: str | None = None
    cached: bool = False
    query_id: int | None = None
    rows: int = 0
    ms: float = 0.0

    @classmethod
    def refused(cls, tool: str, tool_input: Any, message: str) -> ToolRun:
        """A call not run at all (an unknown tool, an input of the wrong shape)."""
        shown = tool_input if isinstance(tool_input, str) else json.dumps(tool_input,
                                                                          default=str)
        return cls(tool, shown, f"error: {message}", is_error=True, error=message)


class Tool:
    """Base of the tools: subclasses set ``definition`` and implement ``call``."""

    definition: ClassVar[dict[str, Any]]

    def __init__(self, context: ToolContext) -> None:
        self.context = context
        # Results a chart may plot, by query id (tools whose results are tables).
        self.results: dict[int, QueryResult] = {}

    @classmethod
    def name(cls) -> str:
        return cls.definition["name"]

    def call(self, tool_input: Any) -> ToolRun:
        """Run one call with the model's ``tool_input``; never raises for the call's sake."""
        raise NotImplementedError
