"""Request and response shapes of feedback and verified queries."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, StringConstraints, field_validator

from api.schemas.common import Strict, not_blank
from api.schemas.jobs import MAX_MESSAGE_CHARS, UUID_PATTERN

MAX_COMMENT_CHARS = 2000
MAX_SQL_CHARS = 20000


class FeedbackCreate(Strict):
    rating: Literal["up", "down"] = Field(description="Whether the answer was right.")
    comment: Annotated[str, StringConstraints(max_length=MAX_COMMENT_CHARS)] | None = Field(
        default=None, description="What was wrong (or right) with it.")


class FeedbackQuery(Strict):
    rating: Literal["up", "down"] | None = None
    from_: str | None = Field(default=None, alias="from",
                              description="Only feedback given at or after this ISO 8601 time.")


class FeedbackOut(BaseModel):
    job_id: str
    rating: str
    comment: str | None
    user: str = Field(description="Who rated: the user's id, or \"tenant\" for a tenant key.")
    question: str | None = None
    answer_text: str | None = None
    sql: str | None = Field(default=None, description="The query the answer relied on.")
    created_at: str | None = None
    updated_at: str | None = None


class FeedbackList(BaseModel):
    items: list[FeedbackOut]


class VerifiedQueryCreate(Strict):
    question: Annotated[str, StringConstraints(min_length=1, max_length=MAX_MESSAGE_CHARS)]
    sql: Annotated[str, StringConstraints(min_length=1, max_length=MAX_SQL_CHARS)]
    from_job_id: Annotated[str, StringConstraints(pattern=UUID_PATTERN)] | None = None

    _blank = field_validator("question", "sql")(not_blank)


class VerifiedQueryOut(BaseModel):
    verified_query_id: str
    question: str
    sql: str
    from_job_id: str | None = None
    created_by: str
    created_at: str | None


class VerifiedQueryList(BaseModel):
    items: list[VerifiedQueryOut]
