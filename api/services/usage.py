"""Token and cost aggregates of one tenant, summed from the per-call ``llm_calls`` rows.

Per-call rows are what was really spent: a job retried after a lost worker has the
calls of every attempt here, while its job row keeps the figures of the attempt
that finished. Totals are one more query over the same rows, so they equal the sum
of the per-call rows exactly (jobs are counted once even when a job's calls span
two days). A call to a model without a known price has a null cost; see ``_figures``.
"""
from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any, Literal

from sqlalchemy import distinct, func, select
from sqlalchemy.orm import Session

from shared.models import LlmCall, Tenant

GroupBy = Literal["day", "model", "tenant"]
TOKEN_FIELDS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens")


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
        *(func.coalesce(func.sum(getattr(LlmCall, name)), 0).label(name) for name in TOKEN_FIELDS),
        func.coalesce(func.sum(LlmCall.cost_usd), 0).label("cost_usd"),
        (func.count(LlmCall.id) - func.count(LlmCall.cost_usd)).label("unpriced_calls"),
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
    items = [_figures(row._mapping, key=_key(row.key)) for row in session.execute(grouped)]
    totals = _figures(session.execute(total).one()._mapping)
    return {"group_by": group_by, "items": items, "totals": totals}


def _key(value: Any) -> str:
    return value.isoformat() if isinstance(value, dt.date) else str(value)


def _figures(row, **extra) -> dict[str, Any]:
    out: dict[str, Any] = dict(extra)
    out["jobs"] = int(row["jobs"])
    out["llm_calls"] = int(row["llm_calls"])
    for name in TOKEN_FIELDS:
        out[name] = int(row[name])
    # Calls to a model without a known price make the group's cost unknown (null),
    # never a smaller number; unpriced_calls says how many there were.
    out["unpriced_calls"] = int(row["unpriced_calls"])
    out["cost_usd"] = None if out["unpriced_calls"] else float(Decimal(row["cost_usd"]))
    prompt = out["input_tokens"] + out["cache_read_tokens"] + out["cache_creation_tokens"]
    out["cache_hit_ratio"] = round(out["cache_read_tokens"] / prompt, 6) if prompt else 0.0
    return out
