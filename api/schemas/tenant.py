"""Request and response shapes of /v1/tenant."""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from shared.people import UNKNOWN_USERS

UnknownUsers = Literal[UNKNOWN_USERS]
UNKNOWN_USERS_HELP = ("What a Sunrise-User naming an external id no user has does: create "
                      "creates that user as a viewer, refuse answers 403 (create users "
                      "first with POST /v1/users).")

Usd = Field(default=None, ge=0, le=10_000_000, allow_inf_nan=False,
            description="US dollars; null for no limit on this period.")


class BudgetIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    monthly_usd: float | None = Usd
    daily_usd: float | None = Usd
    on_exceed: Literal["block", "warn"] = Field(
        default="block", description="block: new jobs, batches and schedule runs get 429 "
                                     "budget_exceeded; warn: they run, and a warning is "
                                     "logged.")


class TenantPatch(BaseModel):
    """The settings to change; those left out stay as they are."""

    model_config = ConfigDict(extra="forbid")

    budget: BudgetIn | None = Field(default=None, description="The cost budget (UTC day "
                                    "and month); null removes it. Owners only.")
    unknown_users: UnknownUsers = Field(default=None, description=UNKNOWN_USERS_HELP
                                        + " Admins and owners.")

    @model_validator(mode="after")
    def needs_a_setting(self) -> TenantPatch:
        if not self.model_fields_set:
            raise ValueError("send budget, unknown_users or both")
        return self


class BudgetOut(BaseModel):
    monthly_usd: float | None
    daily_usd: float | None
    on_exceed: Literal["block", "warn"]


class SpendOut(BaseModel):
    today_usd: float = Field(description="Cost of this UTC day's model calls.")
    month_usd: float = Field(description="Cost of this UTC month's model calls.")
    day_resets_at: str
    month_resets_at: str


class TenantOut(BaseModel):
    tenant_id: int
    name: str
    unknown_users: UnknownUsers = Field(description=UNKNOWN_USERS_HELP)
    budget: BudgetOut | None
    spend: SpendOut
