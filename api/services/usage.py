"""Token and cost aggregates of one tenant, summed from the per-call ``llm_calls`` rows.

Per-call rows are what was really spent: a job retried after a lost worker has the
calls of every attempt here, while its job row keeps the figures of the attempt
that finished. Totals are one more query over the same rows, so they equal the sum
of the per-call rows exactly (jobs are counted once even when a job's calls span
two days). A call to a model without a known price has a null cost; see ``_figures``.
"""
from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from sqlalchemy import distinct, func, select
from sqlalchemy.orm import Session

from shared.models import LlmCall, Tenant
from shared.usage_figures import TOKEN_FIELDS, cache_hit_ratio, read_sums, sum_columns

GroupBy = Literal["day", "model", "tenant"]
SUMMED = (*TOKEN_FIELDS, "cost_usd")


def usage_report(session: Session, tenant_id: int, group_by: GroupBy,
                 start: dt.datetime | None, end: dt.datetime | None) -> dict[str, Any]:
    """Aggregates of ``tenant_id``'s LLM calls with ``start <= created_at < end`` (UTC).

    ``items`` are ordered by key (days ascending); ``totals`` cover the whole range.
    Read-only; raises only database errors.
    """
    key = {
        "day": func.date(LlmCall.created_at),
        "model": LlmCall.model,
        "tenant": Tenant.name,
    }[group_by]
    figures = [
        func.count(distinct(LlmCall.job_id)).label("jobs"),
        func.count(LlmCall.id).label("llm_calls"),
        *sum_columns(LlmCall, SUMMED),
    ]
    where = [LlmCall.tenant_id == tenant_id]
    if start is not None:
        where.append(LlmCall.created_at >= start)
    if end is not None:
        where.append(LlmCall.created_at < end)
    grouped = select(key.label("key"), *figures).where(*where).group_by(key).order_by(key)
    total = select(*figures).where(*where)
    if group_by == "tenant":
        grouped = grouped.join(Tenant, Tenant.id == LlmCall.tenant_id)
    items = [_figures(row, key=_key(row.key)) for row in session.execute(grouped)]
    totals = _figures(session.execute(total).one())
    return {"group_by": group_by, "items": items, "totals": totals}


def _key(value: Any) -> str:
    return value.isoformat() if isinstance(value, dt.date) else str(value)


def _figures(row, **extra) -> dict[str, Any]:
    # Calls to a model without a known price make the group's cost unknown (null),
    # never a smaller number; unpriced_calls says how many there were.
    out: dict[str, Any] = {**extra, "jobs": int(row.jobs), "llm_calls": int(row.llm_calls),
                           **read_sums(row, SUMMED), "unpriced_calls": int(row.unpriced)}
    out["cache_hit_ratio"] = cache_hit_ratio(out, digits=6) or 0.0
    return out
