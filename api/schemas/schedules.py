"""Request and response schemas of /v1/schedules (they also generate /openapi.json)."""
from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, Field, field_validator

from api.schemas.common import Strict, not_blank
from api.schemas.jobs import UUID_PATTERN, Question
from shared.reports import FORMATS
from shared.schedules.condition import OPERATORS

MAX_SCHEDULE_QUESTIONS = 50
AskedQuestion = Annotated[Question, AfterValidator(not_blank)]
# One address: a local part and a dotted domain, no spaces, no display name, no list.
_EMAIL = re.compile(r"^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}"
                    r"[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$")


class EmailDelivery(Strict):
    type: Literal["email"]
    to: list[Annotated[str, Field(max_length=254)]] = Field(min_length=1, max_length=50)

    @field_validator("to")
    @classmethod
    def _addresses(cls, to: list[str]) -> list[str]:
        bad = [a for a in to if not _EMAIL.match(a)]
        if bad:
            raise ValueError(f"{bad[0][:80]!r} is not an email address")
        return to


class SlackDelivery(Strict):
    type: Literal["slack"]
    webhook_url: str = Field(max_length=500, description="A Slack incoming webhook URL.")


class WebhookDelivery(Strict):
    type: Literal["webhook"]
    url: str = Field(max_length=500, description="Called with a signed POST per run.")


Delivery = Annotated[EmailDelivery | SlackDelivery | WebhookDelivery, Field(discriminator="type")]


class Condition(Strict):
    sql: str = Field(min_length=1, max_length=20_000,
                     description="One read-only statement; its first cell is compared.")
    op: Literal[tuple(OPERATORS)]  # type: ignore[valid-type]
    value: float


class ScheduleFields(Strict):
    """What POST requires and PATCH may change."""

    name: str = Field(min_length=1, max_length=200)
    questions: list[AskedQuestion] = Field(min_length=1, max_length=MAX_SCHEDULE_QUESTIONS)
    dataset_id: str | None = Field(default=None, pattern=UUID_PATTERN)
    conversation: Literal["separate", "shared"] = "separate"
    mode: Literal["standard", "economy"] = "standard"
    cron: str = Field(max_length=100, description="Five fields, read in `timezone`.")
    timezone: str = Field(default="UTC", max_length=64, description="An IANA time zone.")
    format: Literal[tuple(FORMATS)] = "html"  # type: ignore[valid-type]
    deliver: list[Delivery] = Field(min_length=1, max_length=20)
    condition: Condition | None = None
    paused: bool = False


class ScheduleCreate(ScheduleFields):
    pass


class ScheduleUpdate(Strict):
    """Every field optional; the ones given replace the schedule's."""

    name: str | None = Field(default=None, min_length=1, max_length=200)
    questions: list[AskedQuestion] | None = Field(default=None, min_length=1,
                                             max_length=MAX_SCHEDULE_QUESTIONS)
    dataset_id: str | None = Field(default=None, pattern=UUID_PATTERN)
    conversation: Literal["separate", "shared"] | None = None
    mode: Literal["standard", "economy"] | None = None
    cron: str | None = Field(default=None, max_length=100)
    timezone: str | None = Field(default=None, max_length=64)
    format: Literal[tuple(FORMATS)] | None = None  # type: ignore[valid-type]
    deliver: list[Delivery] | None = Field(default=None, min_length=1, max_length=20)
    condition: Condition | None = None
    paused: bool | None = None


class RunsQuery(Strict):
    limit: int = Field(default=20, ge=1, le=200)


class ScheduleCreated(BaseModel):
    """The schedule was saved. ``secret`` signs its webhook deliveries: shown this once."""

    schedule_id: str
    next_run_at: str | None
    secret: str
    links: dict[str, str]


class ScheduleOut(BaseModel):
    schedule_id: str
    name: str
    cron: str
    timezone: str
    paused: bool
    next_run_at: str | None


class ScheduleList(BaseModel):
    schedules: list[ScheduleOut]


class RunOut(BaseModel):
    run_id: str
    slot: str
    status: Literal["skipped", "running", "delivered", "partially_delivered", "failed"]
    batch_id: str | None
    condition_value: float | None
    deliveries: list[dict]


class RunList(BaseModel):
    runs: list[RunOut]
