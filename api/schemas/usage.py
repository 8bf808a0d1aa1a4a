"""Request and response shapes of /v1/usage."""
from __future__ import annotations

import datetime as dt
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator, model_validator

from api.schemas.common import figure_fields
from shared.usage_figures import TOKEN_FIELDS

_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
Instant = dt.date | dt.datetime


class UsageQuery(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    group_by: Literal["day", "model", "tenant"] = Field(
        default="day", description="One item per UTC day, per model, or per tenant (yours).")
    from_: Instant | None = Field(
        default=None, alias="from",
        description="Start, inclusive: a date (YYYY-MM-DD, UTC) or an ISO 8601 date-time.")
    to: Instant | None = Field(
        default=None,
        description="End: a date includes that whole UTC day; a date-time is exclusive.")

    @field_validator("from_", "to", mode="before")
    @classmethod
    def _date_or_datetime(cls, value):
        if isinstance(value, str) and _DATE_ONLY.match(value):
            return dt.date.fromisoformat(value)
        if isinstance(value, str):
            return dt.datetime.fromisoformat(value)
        return value

    @model_validator(mode="after")
    def _ordered(self) -> UsageQuery:
        start, end = self.start(), self.end()
        if start is not None and end is not None and start >= end:
            raise ValueError("'from' must be before 'to'")
        return self

    def start(self) -> dt.datetime | None:
        return _utc_naive(self.from_, next_day=False)

    def end(self) -> dt.datetime | None:
        return _utc_naive(self.to, next_day=True)


UsageFigures = create_model(
    "UsageFigures", __module__=__name__, jobs=(int, ...), llm_calls=(int, ...),
    **figure_fields(*TOKEN_FIELDS, "cost_usd"),
    unpriced_calls=(int, Field(description="calls to a model without a known price")),
    cache_hit_ratio=(float, Field(description="cache_read / (input + cache_read + cache_write)")))


class UsageItem(UsageFigures):
    key: str


class UsageOut(BaseModel):
    """Aggregates of the per-call rows; ``totals`` equal their sum over the range."""

    group_by: Literal["day", "model", "tenant"]
    items: list[UsageItem]
    totals: UsageFigures


def _utc_naive(value: Instant | None, *, next_day: bool) -> dt.datetime | None:
    # Stored timestamps are naive UTC; a bare date as an end means "through that day".
    if value is None:
        return None
    try:
        if isinstance(value, dt.datetime):
            return value.astimezone(dt.UTC).replace(tzinfo=None) if value.tzinfo else value
        day = value + dt.timedelta(days=1) if next_day else value
        return dt.datetime.combine(day, dt.time())
    except OverflowError:
        # Past an end of the calendar (9999-12-31 through that day, year 1 at +14:00):
        # as far as the calendar goes in that direction.
        return dt.datetime.max if value.year == dt.MAXYEAR else dt.datetime.min
