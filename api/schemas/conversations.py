"""Response shapes of /v1/conversations."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from api.schemas.jobs import NumbersCheck


class MessageOut(BaseModel):
    role: Literal["user", "assistant"]
    text: str
    charts: list[dict[str, Any]] | None
    numbers: NumbersCheck | None = Field(
        default=None, description="An answer's faithfulness check, as in its job's result.")
    job_id: str | None
    created_at: str | None
    data_as_of: str | None = Field(
        default=None, description="An answer's data_as_of, as in its job (ISO 8601).")


class ConversationSummary(BaseModel):
    conversation_id: str
    title: str
    created_at: str | None
    updated_at: str | None


class ConversationList(BaseModel):
    items: list[ConversationSummary]
    next_cursor: str | None


class ConversationOut(ConversationSummary):
    messages: list[MessageOut]


