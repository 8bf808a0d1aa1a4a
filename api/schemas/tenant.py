"""Request and response shapes of /v1/tenant."""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

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
    model_config = ConfigDict(extra="forbid")

    budget: BudgetIn | None = Field(description="The cost budget (UTC day and month); "
                                                "null removes it.")


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
    budget: BudgetOut | None
    spend: SpendOut
