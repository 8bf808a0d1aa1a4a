"""A schedule and its runs as clients see them."""
from __future__ import annotations

from typing import Any

from shared.models import Schedule, ScheduleRun, iso


def schedule_links(schedule_id: str) -> dict[str, str]:
    base = f"/v1/schedules/{schedule_id}"
    return {"self": base, "runs": f"{base}/runs", "run": f"{base}/run"}


def schedule_view(schedule: Schedule, last_runs: list[ScheduleRun] | None = None) -> dict[str, Any]:
    """The schedule (never its secret) with its links; ``last_runs`` when given."""
    spec = schedule.spec
    view = {"schedule_id": schedule.id, "name": schedule.name,
            "questions": spec["questions"], "dataset_id": spec.get("dataset_id"),
            "conversation": spec.get("conversation", "separate"),
            "mode": spec.get("mode", "standard"), "cron": schedule.cron,
            "timezone": schedule.timezone, "format": spec.get("format", "html"),
            "deliver": spec["deliver"], "condition": spec.get("condition"),
            "paused": schedule.paused, "next_run_at": iso(schedule.next_run_at),
            "user_id": schedule.user_id, "created_at": iso(schedule.created_at),
            "updated_at": iso(schedule.updated_at), "links": schedule_links(schedule.id)}
    if last_runs is not None:
        view["last_runs"] = [run_view(r) for r in last_runs]
    return view


def run_view(run: ScheduleRun) -> dict[str, Any]:
    return {"run_id": run.id, "schedule_id": run.schedule_id, "slot": iso(run.slot),
            "manual": run.manual, "status": run.status, "reason": run.reason,
            "batch_id": run.batch_id, "condition_value": run.condition_value,
            "deliveries": run.deliveries or [], "created_at": iso(run.created_at),
            "finished_at": iso(run.finished_at),
            "links": {"batch": f"/v1/batches/{run.batch_id}" if run.batch_id else None,
                      "report": (f"/v1/batches/{run.batch_id}/report?format=html"
                                 if run.batch_id else None)}}
