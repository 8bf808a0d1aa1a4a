"""Schedule use cases: save, list, read, change, delete, run now, list runs.

Every query is scoped to the tenant, and to the caller's own schedules unless the
principal is an admin (``api.acting.current_principal``); anything else is NotFound.
"""
from __future__ import annotations

import logging
import secrets
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError

from api.resources import Resources
from api.schemas.schedules import ScheduleCreate, ScheduleUpdate
from api.services.datasets import check_usable
from engine.dataset_query import statement_problem
from shared.celery_factory import REPORTS_QUEUE, RUN_SCHEDULE
from shared.cron_schedule import CronSchedule
from shared.errors import NotFound, ValidationFailed
from shared.models import Schedule, ScheduleRun, is_id, new_id, utcnow
from shared.principal import Principal
from shared.schedules.targets import check_target
from shared.schedules.view import run_view, schedule_links, schedule_view

logger = logging.getLogger(__name__)

_SPEC_FIELDS = ("questions", "dataset_id", "conversation", "mode", "format", "deliver",
                "condition")
LAST_RUNS = 5


def _check(res: Resources, principal: Principal, fields: dict[str, Any],
           new_dataset: bool = True) -> CronSchedule:
    """Everything a schema cannot check: the cron and zone, the condition's SQL, the
    delivery targets against the outbound policy (ValidationFailed naming the field);
    a ``new_dataset`` not shared with ``principal`` (NotFound, as for an unknown id)."""
    if new_dataset and fields.get("dataset_id") is not None:
        check_usable(res, principal, fields["dataset_id"])
    schedule = CronSchedule.parse(fields["cron"], fields["timezone"])
    if fields.get("mode") == "economy" and fields.get("conversation") == "shared":
        raise ValidationFailed("mode: economy mode answers questions side by side; it "
                               "cannot share one conversation.", field="mode")
    condition = fields.get("condition")
    if condition is not None:
        with res.session() as s:  # checked in the dialect of the dataset's engine
            problem = statement_problem(s, principal.tenant_id, fields.get("dataset_id"),
                                        condition["sql"])
        if problem is not None:
            raise ValidationFailed(f"condition.sql: {problem}", field="condition.sql")
    for index, target in enumerate(fields["deliver"]):
        check_target(res.settings, target, index)
    return schedule


def _visible(principal: Principal):
    where = [Schedule.tenant_id == principal.tenant_id]
    if not principal.is_admin:
        where.append(Schedule.user_id == principal.user_id)
    return where


def _load(s, principal: Principal, schedule_id: str) -> Schedule:
    schedule = (s.scalar(select(Schedule).where(Schedule.id == schedule_id,
                                                *_visible(principal)))
                if is_id(schedule_id) else None)
    if schedule is None:
        raise NotFound(f"No schedule {schedule_id}.")
    return schedule


def create_schedule(res: Resources, principal: Principal, body: ScheduleCreate) -> dict[str, Any]:
    """Save the schedule; its first slot is the cron's next after now (none while
    paused). Returns ``schedule_id``, ``next_run_at``, the signing ``secret`` (shown
    this once) and links."""
    fields = body.model_dump()
    cron = _check(res, principal, fields)
    now = utcnow()
    schedule = Schedule(
        id=new_id(), tenant_id=principal.tenant_id, user_id=principal.user_id,
        name=body.name.strip(), spec={k: fields[k] for k in _SPEC_FIELDS},
        cron=cron.cron, timezone=cron.timezone, paused=body.paused,
        secret=secrets.token_hex(32),
        next_run_at=None if body.paused else cron.next_after(now), created_at=now,
        updated_at=now)
    with res.sessions.begin() as s:
        s.add(schedule)
    logger.info("schedule %s saved for tenant %s: %r, %s", schedule.id, principal.tenant_id,
                cron.cron, cron.timezone)
    view = schedule_view(schedule)
    return {"schedule_id": schedule.id, "next_run_at": view["next_run_at"],
            "secret": schedule.secret, "links": schedule_links(schedule.id)}


def list_schedules(res: Resources, principal: Principal) -> dict[str, Any]:
    with res.sessions() as s:
        rows = s.scalars(select(Schedule).where(*_visible(principal))
                         .order_by(Schedule.created_at.desc()).limit(500)).all()
        return {"schedules": [schedule_view(r, _last_runs(s, r.id)) for r in rows]}


def get_schedule(res: Resources, principal: Principal, schedule_id: str) -> dict[str, Any]:
    with res.sessions() as s:
        schedule = _load(s, principal, schedule_id)
        return schedule_view(schedule, _last_runs(s, schedule.id))


def update_schedule(res: Resources, principal: Principal, schedule_id: str,
                    body: ScheduleUpdate) -> dict[str, Any]:
    """Apply the given fields; a changed cron, zone or a resume moves ``next_run_at`` to
    the next slot after now, a pause clears it."""
    given = body.model_dump(exclude_unset=True)
    with res.sessions.begin() as s:
        schedule = _load(s, principal, schedule_id)
        fields = {**schedule.spec, "name": schedule.name, "cron": schedule.cron,
                  "timezone": schedule.timezone, "paused": schedule.paused, **given}
        cron = _check(res, principal, fields, new_dataset="dataset_id" in given)
        timing = (cron.cron, cron.timezone, fields["paused"]) != (
            schedule.cron, schedule.timezone, schedule.paused)
        schedule.name = fields["name"].strip()
        schedule.spec = {k: fields.get(k) for k in _SPEC_FIELDS}
        schedule.cron, schedule.timezone, schedule.paused = cron.cron, cron.timezone, \
            fields["paused"]
        if timing:
            schedule.next_run_at = None if schedule.paused else cron.next_after(utcnow())
        schedule.updated_at = utcnow()
        s.flush()
        return schedule_view(schedule, _last_runs(s, schedule.id))


def delete_schedule(res: Resources, principal: Principal, schedule_id: str) -> None:
    with res.sessions.begin() as s:
        schedule = _load(s, principal, schedule_id)
        s.execute(delete(ScheduleRun).where(ScheduleRun.schedule_id == schedule.id))
        s.delete(schedule)


def run_now(res: Resources, principal: Principal, schedule_id: str) -> dict[str, Any]:
    """Record a run for now (a manual slot) and send it to the worker; a paused
    schedule runs too (asked explicitly). Returns the run's view."""
    now = utcnow()
    with res.sessions.begin() as s:
        schedule = _load(s, principal, schedule_id)
        run = ScheduleRun(id=new_id(), schedule_id=schedule.id, tenant_id=schedule.tenant_id,
                          slot=now, manual=True, status="running", created_at=now)
        s.add(run)
        try:
            s.flush()
        except IntegrityError:
            raise ValidationFailed("A run for this instant exists already; retry.") from None
        view = run_view(run)
    try:
        res.celery.send_task(RUN_SCHEDULE, args=[run.id], queue=REPORTS_QUEUE)
    except Exception as exc:  # the tick sends a run left unsent
        logger.warning("schedule %s: run %s not sent now: %s", schedule_id, run.id, exc)
    return view


def list_runs(res: Resources, principal: Principal, schedule_id: str,
              limit: int) -> dict[str, Any]:
    with res.sessions() as s:
        schedule = _load(s, principal, schedule_id)
        return {"runs": [run_view(r) for r in _last_runs(s, schedule.id, limit)]}


def _last_runs(s, schedule_id: str, limit: int = LAST_RUNS) -> list[ScheduleRun]:
    return list(s.scalars(select(ScheduleRun).where(ScheduleRun.schedule_id == schedule_id)
                          .order_by(ScheduleRun.slot.desc()).limit(limit)))
