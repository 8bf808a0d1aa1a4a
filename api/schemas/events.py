"""The events of the two Server-Sent Event streams, as the spec describes them.

Each event is ``id:`` (a Redis stream id; absent only when the API sends an ended
object's stored state because Redis is unreachable), ``event:`` (its name) and
``data:`` (one line of JSON, whose shape depends on the name). ``/openapi.json``
describes every event the OpenAPI 3.2 way: an ``itemSchema`` per stream, one branch
per event name, with ``data`` a JSON string whose ``contentSchema`` is the model
below. Events not listed here may be added later: clients ignore names they do not
know, and the spec allows them (any JSON object).
"""
from __future__ import annotations

import dataclasses

from pydantic import BaseModel, Field

from api.schemas.batches import BatchOut, BatchProgress
from api.schemas.datasets import DatasetOut, ImportProgressEvent
from api.schemas.jobs import JobOut, TokenUsage


class JobStarted(BaseModel):
    """A worker claimed the job (``attempt`` counts from 1; economy mode says so)."""

    attempt: int
    mode: str | None = None


class LlmCallEvent(TokenUsage):
    """One model call of the job ended: its round, tokens, cost and stop reason."""

    round: int
    stop_reason: str | None
    ms: int


class ToolCallEvent(BaseModel):
    """One tool call ended (``query_id`` is null when it failed or names no result)."""

    round: int
    tool: str = Field(description="The tool called (execute_sql).")
    query_id: int | None
    sql: str = Field(description="The call's input as text: for execute_sql, the statement.")
    rows: int
    cached: bool
    ms: float
    error: str | None


class ThinkingEvent(BaseModel):
    """Summary text of the model's thinking in one round, when it thinks."""

    round: int
    text: str


class AnswerDelta(BaseModel):
    """The answer text written so far, while the model writes it."""

    text: str


@dataclasses.dataclass(frozen=True)
class EventStream:
    """A ``text/event-stream`` response: what it is, and the data model of each event."""

    description: str
    events: dict[str, type[BaseModel]]


JOB_EVENTS = EventStream("text/event-stream of the job's events", {
    "queued": JobOut, "started": JobStarted, "llm_call": LlmCallEvent,
    "tool_call": ToolCallEvent, "thinking": ThinkingEvent, "answer_delta": AnswerDelta,
    "succeeded": JobOut, "failed": JobOut, "cancelled": JobOut,
})
BATCH_EVENTS = EventStream("text/event-stream of the batch's events", {
    "queued": BatchOut, "progress": BatchProgress, "completed": BatchOut,
})
DATASET_EVENTS = EventStream("text/event-stream of the dataset's latest import", {
    "progress": ImportProgressEvent, "ready": DatasetOut, "failed": DatasetOut,
})
