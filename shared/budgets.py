"""Tenant cost budgets: what a tenant spent this UTC day and month, and whether it may
start new work.

Spend is the usage figures' cost (``shared/usage_figures.py``) of the tenant's model
calls, summed from the per-call ``llm_calls`` rows (the same rows ``GET /v1/usage``
sums): a call to a model without a known price adds nothing here and is counted by
``/v1/usage`` as ``unpriced_calls``. Periods are UTC calendar days and months.

:func:`admit_work` is the one gate for new work -- a job, a batch, a schedule run: over
a ``block`` budget it raises ``BudgetExceeded`` (429) naming the limit, the spend and
when the period resets; over a ``warn`` budget it logs and admits. Work already
accepted is never refused here: a running job finishes, a queued one runs.

Every statement is a prebuilt Core statement with bound parameters, so the same
functions run on an ORM ``Session``, a Core ``Connection`` and the submit path's
``DriverConnection`` (``shared/driver_sql.py``).
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import logging
from decimal import Decimal
from typing import Any

from sqlalchemy import bindparam, case, func, select

from shared.errors import BudgetExceeded, ValidationFailed
from shared.models import LlmCall, Tenant, TenantBudget, utcnow

logger = logging.getLogger(__name__)

ON_EXCEED = ("block", "warn")
PERIODS = ("day", "month")
ADJECTIVE = {"day": "daily", "month": "monthly"}

_budgets = TenantBudget.__table__
_calls = LlmCall.__table__

_BUDGET = select(_budgets.c.monthly_usd, _budgets.c.daily_usd, _budgets.c.on_exceed).where(
    _budgets.c.tenant_id == bindparam("tenant_id"))
_SPEND = select(
    func.coalesce(func.sum(case((_calls.c.created_at >= bindparam("day_start"),
                                 _calls.c.cost_usd), else_=None)), 0).label("day"),
    func.coalesce(func.sum(_calls.c.cost_usd), 0).label("month"),
).where(_calls.c.tenant_id == bindparam("tenant_id"),
        _calls.c.created_at >= bindparam("month_start"))


@dataclasses.dataclass(frozen=True)
class Periods:
    """The current UTC day and month of ``now``, and when each resets."""

    day_start: dt.datetime
    day_reset: dt.datetime
    month_start: dt.datetime
    month_reset: dt.datetime

    @classmethod
    def at(cls, now: dt.datetime) -> Periods:
        day = now.replace(hour=0, minute=0, second=0, microsecond=0)
        month = day.replace(day=1)
        next_month = (month + dt.timedelta(days=32)).replace(day=1)
        return cls(day, day + dt.timedelta(days=1), month, next_month)


def spend(conn: Any, tenant_id: int, periods: Periods) -> dict[str, Decimal]:
    """The tenant's spend (USD) in ``periods``' day and month: ``{"day", "month"}``."""
    row = conn.execute(_SPEND, {"tenant_id": tenant_id, "day_start": periods.day_start,
                                "month_start": periods.month_start}).first()
    return {"day": Decimal(row.day or 0), "month": Decimal(row.month or 0)}


def admit_work(conn: Any, tenant_id: int, *, now: dt.datetime | None = None) -> None:
    """Refuse new work of a tenant over a ``block`` budget; admit everything else.

    Read-only. Raises ``BudgetExceeded`` with ``limit_usd``, ``spend_usd``, ``period``
    and ``resets_at`` (and a ``retry_after`` in seconds until the reset). Over a
    ``warn`` budget it logs a warning and returns. A tenant without a budget costs one
    primary-key lookup.
    """
    budget = conn.execute(_BUDGET, {"tenant_id": tenant_id}).first()
    if budget is None:
        return
    now = now or utcnow()
    periods = Periods.at(now)
    spent = spend(conn, tenant_id, periods)
    for period, limit, resets in (("day", budget.daily_usd, periods.day_reset),
                                  ("month", budget.monthly_usd, periods.month_reset)):
        if limit is None or spent[period] < Decimal(limit):
            continue
        if budget.on_exceed == "warn":
            logger.warning("tenant %s is over its %s budget (%s of %s USD); admitted (warn)",
                           tenant_id, period, spent[period], limit)
            continue
        raise BudgetExceeded(
            f"This tenant's {ADJECTIVE[period]} budget of {_usd(limit)} USD is spent "
            f"({_usd(spent[period])} USD this {period}); new work is refused until "
            f"{resets.isoformat()}Z. Jobs already accepted still run.",
            retry_after=max(1, int((resets - now).total_seconds())),
            period=period, limit_usd=float(limit), spend_usd=float(spent[period]),
            resets_at=resets.isoformat() + "Z")


def budget_view(conn: Any, tenant_id: int, *, now: dt.datetime | None = None) -> dict[str, Any]:
    """The tenant's budget (or None) and spend this day and month, as ``GET /v1/tenant``
    shows them."""
    periods = Periods.at(now or utcnow())
    budget = conn.execute(_BUDGET, {"tenant_id": tenant_id}).first()
    spent = spend(conn, tenant_id, periods)
    return {
        "budget": None if budget is None else {
            "monthly_usd": _money(budget.monthly_usd), "daily_usd": _money(budget.daily_usd),
            "on_exceed": budget.on_exceed},
        "spend": {"today_usd": float(spent["day"]), "month_usd": float(spent["month"]),
                  "day_resets_at": periods.day_reset.isoformat() + "Z",
                  "month_resets_at": periods.month_reset.isoformat() + "Z"},
    }


def set_budget(session: Any, tenant_id: int, budget: dict[str, Any] | None) -> None:
    """Set (or, with None, remove) the tenant's budget; the caller commits.

    ``budget`` holds ``monthly_usd``, ``daily_usd`` (each a non-negative number or None)
    and ``on_exceed``; raises ValidationFailed for a budget with neither limit."""
    row = session.get(TenantBudget, tenant_id)
    if budget is None:
        if row is not None:
            session.delete(row)
        return
    if budget.get("monthly_usd") is None and budget.get("daily_usd") is None:
        raise ValidationFailed("A budget needs monthly_usd, daily_usd or both; "
                               "send \"budget\": null to remove it.")
    if row is None:
        row = TenantBudget(tenant_id=tenant_id)
        session.add(row)
    row.monthly_usd = budget.get("monthly_usd")
    row.daily_usd = budget.get("daily_usd")
    row.on_exceed = budget.get("on_exceed") or "block"
    row.updated_at = utcnow()


def spend_by_tenant(session: Any, *, now: dt.datetime | None = None) -> list[dict[str, Any]]:
    """Every tenant with a budget or spend this month: its name, spend per period and
    limits (for the metrics; ``shared/metrics.py``)."""
    periods = Periods.at(now or utcnow())
    day = func.coalesce(func.sum(case((LlmCall.created_at >= periods.day_start,
                                       LlmCall.cost_usd), else_=None)), 0)
    spent = {row.tenant_id: row for row in session.execute(
        select(LlmCall.tenant_id, day.label("day"),
               func.coalesce(func.sum(LlmCall.cost_usd), 0).label("month"))
        .where(LlmCall.created_at >= periods.month_start).group_by(LlmCall.tenant_id))}
    budgets = {b.tenant_id: b for b in session.scalars(select(TenantBudget))}
    ids = set(spent) | set(budgets)
    names = dict(session.execute(select(Tenant.id, Tenant.name).where(Tenant.id.in_(ids)))
                 .all()) if ids else {}
    out = []
    for tenant_id in sorted(ids):
        row, budget = spent.get(tenant_id), budgets.get(tenant_id)
        out.append({
            "tenant": names.get(tenant_id, str(tenant_id)),
            "spend": {"day": float(row.day if row else 0), "month": float(row.month if row else 0)},
            "limit": {"day": _money(budget.daily_usd) if budget else None,
                      "month": _money(budget.monthly_usd) if budget else None},
        })
    return out


def _money(value: Any) -> float | None:
    return None if value is None else float(value)


def _usd(value: Any) -> str:
    return f"{Decimal(value):.2f}"
