"""The beat's tick for schedules: each due slot gets one run, however many ticks, beats
or retried tasks see it.

A schedule's ``next_run_at`` is its next slot in UTC (None while paused). Every tick
(``sunrise.schedules_due``) reads the schedules whose slot has come through
``ix_schedules_next_run`` and for each, in one transaction: inserts the run of the most
recent slot at or before now (the unique (schedule, slot) key makes a second claim fail:
no lock that can expire), records the slots missed before it (while no beat ran) as
``skipped`` runs, and moves ``next_run_at`` past now. The run is sent after the commit.

A run left unsent (the broker was down) or unfinished (a worker was killed) is sent
again by a later tick once it is ``RESEND_AFTER`` old: the runner's steps are guarded, so
a second message starts no second batch and sends no delivery twice.
"""
from __future__ import annotations

import collections
import datetime as dt
import logging

from sqlalchemy import bindparam, insert, or_, select, update
from sqlalchemy.exc import IntegrityError

from shared.celery_factory import DELIVER_SCHEDULE_RUN, REPORTS_QUEUE, RUN_SCHEDULE
from shared.cron_schedule import CronSchedule
from shared.models import Batch, Schedule, ScheduleRun, new_id, utcnow

logger = logging.getLogger(__name__)

# Due schedules started per tick; the rest wait for the next tick.
PER_TICK = 500
# Missed slots recorded, at most, before the one that runs; older ones are not listed.
MISSED_RECORDED = 20
CATCH_UP_WINDOW = dt.timedelta(days=2)
RESEND_AFTER = dt.timedelta(minutes=2)
# A delivery claimed longer ago than this belonged to a worker that died.
DELIVERY_LEASE = dt.timedelta(minutes=15)

_col = Schedule.__table__.c
_runs = ScheduleRun.__table__.c
DUE = (select(_col.id, _col.tenant_id, _col.next_run_at, _col.cron, _col.timezone)
       .where(_col.next_run_at <= bindparam("now"))
       .order_by(_col.next_run_at).limit(PER_TICK))
_ADVANCE = (update(Schedule.__table__)
            .where(_col.id == bindparam("schedule_id"), _col.next_run_at == bindparam("slot"))
            .values(next_run_at=bindparam("next_at")))


def start_due_runs(sessions, celery, now: dt.datetime | None = None) -> list[str]:
    """Claim the latest due slot of every due schedule and send its run; returns the run
    ids started. Safe to run concurrently and repeatedly: a slot runs once."""
    now = now or utcnow()
    with sessions() as s:
        due = s.execute(DUE, {"now": now}).all()
    started = []
    for schedule_id, tenant_id, first, cron, timezone in due:
        run_id = _claim(sessions, schedule_id, tenant_id, first, CronSchedule(cron, timezone), now)
        if run_id is not None:
            _send(celery, RUN_SCHEDULE, run_id)
            started.append(run_id)
    resend_stale(sessions, celery, now)
    return started


def _slots(cron: CronSchedule, first: dt.datetime, now: dt.datetime) -> list[dt.datetime]:
    """The slots from ``first`` to now, the most recent last (at most the last
    ``MISSED_RECORDED`` + 1 of them, within ``CATCH_UP_WINDOW``)."""
    start = first
    if now - first > CATCH_UP_WINDOW:
        start = cron.next_after(now - CATCH_UP_WINDOW)
        if start > now:
            return [first]
    fires = collections.deque([start], maxlen=MISSED_RECORDED + 1)
    while (following := cron.next_after(fires[-1])) <= now:
        fires.append(following)
    return list(fires)


def _claim(sessions, schedule_id: str, tenant_id: int, first: dt.datetime,
           cron: CronSchedule, now: dt.datetime) -> str | None:
    slots = _slots(cron, first, now)
    run_id = new_id()
    rows = [{"id": new_id(), "schedule_id": schedule_id, "tenant_id": tenant_id, "slot": slot,
             "manual": False, "status": "skipped", "created_at": now, "finished_at": now,
             "reason": "missed: no beat ran at this slot"} for slot in slots[:-1]]
    rows.append({"id": run_id, "schedule_id": schedule_id, "tenant_id": tenant_id,
                 "slot": slots[-1], "manual": False, "status": "running", "created_at": now,
                 "finished_at": None, "reason": None})
    advance = {"schedule_id": schedule_id, "slot": first, "next_at": cron.next_after(now)}
    try:
        with sessions.begin() as s:
            s.execute(insert(ScheduleRun.__table__), rows)
            if not s.execute(_ADVANCE, advance).rowcount:
                raise _SlotGone()
    except (IntegrityError, _SlotGone):
        # Claimed by another tick; a schedule still on that slot moves on.
        with sessions.begin() as s:
            s.execute(_ADVANCE, advance)
        logger.info("schedule %s: slot %s already claimed", schedule_id, slots[-1])
        return None
    logger.info("schedule %s: run %s for slot %s (%d missed slots recorded)", schedule_id,
                run_id, slots[-1], len(slots) - 1)
    return run_id


def resend_stale(sessions, celery, now: dt.datetime, limit: int = 100) -> int:
    """Send again the runs a lost message or a killed worker left behind."""
    old = now - RESEND_AFTER
    batches = Batch.__table__.c
    with sessions() as s:
        unstarted = s.scalars(select(_runs.id).where(
            _runs.status == "running", _runs.batch_id.is_(None), _runs.created_at < old)
            .limit(limit)).all()
        undelivered = s.scalars(select(_runs.id).join(
            Batch.__table__, batches.id == _runs.batch_id).where(
            _runs.status == "running", batches.status == "completed",
            batches.completed_at < old,
            or_(_runs.delivery_claimed_at.is_(None),
                _runs.delivery_claimed_at < now - DELIVERY_LEASE)).limit(limit)).all()
    for run_id in unstarted:
        _send(celery, RUN_SCHEDULE, run_id)
    for run_id in undelivered:
        _send(celery, DELIVER_SCHEDULE_RUN, run_id)
    if unstarted or undelivered:
        logger.info("schedules: sent again %d unstarted and %d undelivered runs",
                    len(unstarted), len(undelivered))
    return len(unstarted) + len(undelivered)


def _send(celery, task: str, run_id: str) -> None:
    try:
        celery.send_task(task, args=[run_id], queue=REPORTS_QUEUE)
    except Exception as exc:  # a later tick sends it (resend_stale)
        logger.warning("schedule run %s: %s not sent: %s", run_id, task, exc)


class _SlotGone(Exception):
    """The schedule moved on (changed, paused, or another tick advanced it)."""
