"""Shapes every resource shares: strict request models, problems, event stream queries,
list pages, the health check, and the usage figures as schema fields."""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from shared.usage_figures import MEANINGS


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty or only whitespace")
    return value


def figure_fields(*names: str) -> dict[str, Any]:
    """Usage figures (``shared/usage_figures.py``) as required schema fields: a whole
    number each, the cost a float or null."""
    return {name: (float | None if name == "cost_usd" else int,
                   Field(description=MEANINGS[name])) for name in names}


class EventsQuery(BaseModel):
    last_event_id: str | None = Field(default=None, pattern=r"^\d+-\d+$")
    access_token: str | None = Field(default=None, description=(
        "Your API key, for clients that cannot send headers (EventSource)."))


class Problem(BaseModel):
    type: str
    title: str
    status: int
    detail: str
    instance: str | None = None


class ListQuery(Strict):
    limit: int = Field(default=20, ge=1, le=100)
    cursor: str | None = Field(default=None, max_length=200)


class Health(BaseModel):
    status: str
    checks: dict[str, str] = {}
