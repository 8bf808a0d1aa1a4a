"""Request and response shapes of /v1/jobs."""
from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, StringConstraints, create_model, field_validator

from api.schemas.common import Strict, figure_fields, not_blank
from shared.models import ID_PATTERN
from shared.usage_figures import CALL_FIELDS, JOB_COUNTERS

MAX_MESSAGE_CHARS = 8000
UUID_PATTERN = ID_PATTERN

Question = Annotated[str, StringConstraints(min_length=1, max_length=MAX_MESSAGE_CHARS)]


class JobCreate(Strict):
    message: Question = Field(description="The question, in plain language.")
    conversation_id: Annotated[str, StringConstraints(pattern=UUID_PATTERN)] | None = Field(
        default=None, description="Continue this conversation; omit to start a new one.")
    dataset_id: Annotated[str, StringConstraints(pattern=UUID_PATTERN)] | None = Field(
        default=None, description="Ask about this dataset (its current version); omit for "
        "your default dataset, or the deployment's built-in one.")

    _blank = field_validator("message")(not_blank)


class Links(BaseModel):
    self: str
    events: str
    cancel: str


class JobAccepted(BaseModel):
    job_id: str
    conversation_id: str
    status: str
    links: Links


class UnsupportedFigure(BaseModel):
    text: str = Field(description="The figure as written in answer_text.")
    position: int = Field(description="Its offset in answer_text, in characters (code points).")


class NumbersCheck(BaseModel):
    """Every figure of the answer text matched against the job's query results."""

    checked: int = Field(description="Figures found in answer_text and checked.")
    unsupported: list[UnsupportedFigure] = Field(
        description="Figures not found in any query result the model saw.")


class VerifiedMark(BaseModel):
    verified_query_id: str
    question: str = Field(description="The question the query was verified for.")


class Clarification(BaseModel):
    question: str
    options: list[str] = Field(description="Each a complete question, ready to send.")


class JobResult(BaseModel):
    answer_text: str
    charts: list[dict[str, Any]]
    parse_path: Literal["direct", "fenced", "anchored", "raw", "truncated"] | None
    truncated: bool
    numbers: NumbersCheck | None = Field(
        description="The faithfulness check of answer_text (null for answers older than it).")
    verified: VerifiedMark | None = Field(
        default=None, description="The verified query the answer relied on, when it did and "
        "the question means what that query was verified for (docs/verified-queries.md).")
    clarification: Clarification | None = Field(
        default=None, description="A clarifying question instead of a guess: send one of "
        "its options as the next turn of the conversation.")


TokenUsage = create_model(
    "TokenUsage", __doc__="Tokens and cost of one LLM call, or of all of a job's calls.",
    __module__=__name__, **figure_fields(*CALL_FIELDS))
JobUsage = create_model("JobUsage", __doc__="A job's usage: its calls' tokens and cost, and "
                        "its work.", __base__=TokenUsage, __module__=__name__,
                        **figure_fields(*JOB_COUNTERS))


class JobError(BaseModel):
    code: str
    message: str | None


class JobOut(BaseModel):
    job_id: str
    conversation_id: str
    batch_id: str | None
    dataset_id: str | None = Field(description="The dataset asked about; null: the "
                                   "deployment's built-in dataset.")
    dataset_version: int | None = Field(description="The dataset version the job pinned.")
    status: Literal["queued", "running", "succeeded", "failed", "cancelled"]
    message: str
    model: str
    attempt: int
    result: JobResult | None
    usage: JobUsage
    error: JobError | None
    created_at: str | None
    started_at: str | None
    finished_at: str | None
    data_as_of: str | None = Field(
        description="ISO 8601: when the data the answer read was current. A live "
        "dataset: the time the job's first query ran; a snapshot: the time its version's "
        "import finished; the built-in dataset: its file's time. Null until the job "
        "reads data (or when it never did).")
    links: Links


class JobQuery(Strict):
    wait: float = Field(default=0, ge=0, le=30, description="Long-poll up to this many seconds.")


