"""A batch as clients see it: counts per job status, progress, ETA and usage so far.

The API returns it, the worker publishes it as a batch's ``progress`` and ``completed``
events and sends it to the batch's webhook. The API adds the links (``api/links.py``).
"""
from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy.orm import Session

from shared.batch_rows import ordered_job_ids, status_counts, usage_totals
from shared.job_state import TERMINAL
from shared.models import Batch, iso, utcnow
from shared.usage_figures import cache_hit_ratio


def batch_view(batch: Batch, counts: dict[str, int], usage: dict[str, Any],
               job_ids: list[str], *, now: dt.datetime | None = None) -> dict[str, Any]:
    """The batch as the API shows it (its links aside, ``api/links.py``): counts, progress,
    ETA, usage and its jobs."""
    done = sum(counts[k] for k in TERMINAL)
    total = batch.total or 0
    return {
        "batch_id": batch.id,
        "title": batch.title,
        "status": batch.status,
        "mode": batch.mode,
        "conversation": batch.conversation_mode,
        "total": total,
        "done": done,
        "counts": counts,
        "progress": round(done / total, 4) if total else 1.0,
        "eta_s": _eta_s(batch, done, total, now or utcnow()),
        "usage": usage,
        "cache_hit_ratio": cache_hit_ratio(usage, digits=4),
        "webhook_status": batch.webhook_status,
        "job_ids": job_ids,
        "created_at": iso(batch.created_at),
        "completed_at": iso(batch.completed_at),
    }


def _eta_s(batch: Batch, done: int, total: int, now: dt.datetime) -> float | None:
    # Throughput so far extrapolated to what is left; unknown until something ended.
    if batch.status == "completed" or done >= total:
        return 0.0
    if done == 0 or batch.created_at is None:
        return None
    elapsed = max(0.001, (now - batch.created_at).total_seconds())
    return round(elapsed / done * (total - done), 1)


def load_view(s: Session, batch: Batch) -> dict[str, Any]:
    """:func:`batch_view` with its figures read in ``s``."""
    return batch_view(batch, status_counts(s, batch.id), usage_totals(s, batch.id),
                      ordered_job_ids(s, batch.id))
