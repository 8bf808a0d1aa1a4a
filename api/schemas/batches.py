"""Request and response schemas of /v1/batches (they also generate /openapi.json)."""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from api.schemas.common import Strict
from api.schemas.jobs import UUID_PATTERN, JobUsage, Question
from shared.reports import FORMATS

MAX_BATCH_QUESTIONS = 500


class BatchCreate(Strict):
    questions: list[Question] = Field(min_length=1, max_length=MAX_BATCH_QUESTIONS,
                                      description="The questions, answered in this order.")
    title: str = Field(default="", max_length=200, description="Shown on the report.")
    conversation: Literal["separate", "shared"] = Field(
        default="separate", description="separate: every question on its own; shared: one "
        "conversation, asked in order, each question seeing the answers before it.")
    mode: Literal["standard", "economy"] = Field(
        default="standard", description="economy: through the Message Batches API at half "
        "the price, rounds at a time; slower.")
    dataset_id: str | None = Field(default=None, pattern=UUID_PATTERN, description=(
        "Every question asks about this dataset (its current version); omit for your "
        "default dataset, or the deployment's built-in one."))
    webhook_url: str | None = Field(default=None, max_length=500, description=(
        "Called with a signed POST when the batch completes; its host must be allow-listed."))

    @field_validator("questions")
    @classmethod
    def _no_blank_questions(cls, questions: list[str]) -> list[str]:
        blank = [i for i, q in enumerate(questions) if not q.strip()]
        if blank:
            raise ValueError(f"questions {blank[:10]} are empty or only whitespace")
        return questions

    @model_validator(mode="after")
    def _economy_is_separate(self) -> BatchCreate:
        if self.mode == "economy" and self.conversation == "shared":
            raise ValueError("economy mode answers questions side by side; it cannot share "
                             "one conversation")
        return self


class BatchLinks(BaseModel):
    self: str
    events: str
    report: str


class BatchAccepted(BaseModel):
    """The batch was accepted; its questions are queued."""

    batch_id: str
    job_ids: list[str]
    status: Literal["running", "completed"]
    total: int
    links: BatchLinks


class BatchCounts(BaseModel):
    queued: int
    running: int
    succeeded: int
    failed: int
    cancelled: int


class BatchState(BaseModel):
    """A batch: counts per job status, progress (0..1), ETA and usage so far."""

    batch_id: str
    title: str
    status: Literal["running", "completed"]
    mode: Literal["standard", "economy"]
    conversation: Literal["separate", "shared"]
    total: int
    done: int
    counts: BatchCounts
    progress: float
    eta_s: float | None
    usage: JobUsage
    cache_hit_ratio: float | None
    webhook_status: str | None
    created_at: str | None
    completed_at: str | None
    links: BatchLinks


class BatchOut(BatchState):
    """A batch: counts per job status, progress (0..1), ETA, usage so far and its jobs."""

    job_ids: list[str]


class BatchProgress(BatchState):
    """The batch after one of its questions ended, and which one."""

    job_id: str
    index: int | None
    job_status: Literal["succeeded", "failed", "cancelled"]


class ReportQuery(Strict):
    format: Literal[tuple(FORMATS)] = "html"  # type: ignore[valid-type]
    question: int | None = Field(default=None, ge=1,
                                 description="With chart: CSV of that question's chart only.")
    chart: int | None = Field(default=None, ge=1, description="The chart's number, from 1.")
    download: bool = Field(default=False, description="Send as an attachment.")
    access_token: str | None = None


class BatchQuery(Strict):
    """No parameters: refuses any, so a mistyped one is said, not ignored."""
