"""The query a finished job's answer relied on: its first chart's, else the last
execute_sql call that succeeded (the eval's rule; the worker applies the same rule to
the answer it is writing, ``worker/agent/turn.py``)."""
from __future__ import annotations

from sqlalchemy import select

from shared.models import Job, ToolCall


def relied_on_sql(s, job: Job) -> str | None:
    """Read from ``job.charts`` or the job's stored tool calls (its last attempt)."""
    for chart in job.charts or []:
        if isinstance(chart, dict) and chart.get("sql"):
            return chart["sql"]
    return s.scalar(select(ToolCall.sql).where(
        ToolCall.job_id == job.id, ToolCall.attempt == job.attempt,
        ToolCall.tool == "execute_sql", ToolCall.is_error.is_(False))
        .order_by(ToolCall.id.desc()).limit(1))
