"""Running one slot of a schedule, and delivering its report.

``run`` (traced as ``schedule_run``, its outcome the run's status after): the
condition (when set) runs on the dataset through ``engine.dataset_query`` -- a snapshot
in the SQL sandbox, a live dataset on its source with the model's safety (statement
check, read-only session, timeout, slots, outbound policy; an unreachable source fails
the run saying so) -- no model call, as the schedule's owner (``schedules.user_id``;
none: the tenant) -- under the row policies and masks binding them, on a dataset
granted to them, as their jobs would be; a false comparison ends the run ``skipped``
with the value recorded. Otherwise the run becomes a batch (today's engine: fan-out,
report assembly, usage counted for the tenant; its jobs belong to the owner, so the
worker applies the owner's row policies to them), its id set on the run in the batch's
own transaction, guarded so a second message starts no second batch.

``deliver``: once the batch's report is assembled (``on_batch_assembled``, the batch
coordinator's hook), the report goes to every target. The delivery is claimed on the
run (``delivery_claimed_at``); each target's outcome is stored as soon as it is known,
so a delivery taken over after a crash sends only what was not sent. The run ends
``delivered``, ``partially_delivered`` (some targets failed after their retries) or
``failed`` (none received it).
"""
from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from celery import Celery
from sqlalchemy import or_, select, update

from engine.dataset_query import dataset_target, run_on_dataset
from shared import batch_rows, tracing
from shared.budgets import admit_work
from shared.celery_factory import REPORTS_QUEUE, RUN_ECONOMY_BATCH
from shared.config import Settings
from shared.dataset_state import pin_dataset
from shared.db import session_factory
from shared.enqueue import announce
from shared.errors import SunriseError
from shared.events import EventSink
from shared.job_view import job_to_dict
from shared.metrics import get_metrics
from shared.models import Batch, Job, Schedule, ScheduleRun, utcnow
from shared.principal import principal_for_job
from shared.reports.document import unpack
from shared.schedules.condition import first_number, holds
from shared.schedules.targets import describe
from worker.http_delivery import Outcome
from worker.schedules import messages, senders
from worker.schedules.tick import DELIVERY_LEASE

logger = logging.getLogger(__name__)


class ScheduleRunner:
    """One per worker process; thread-safe (state lives in the database)."""

    def __init__(self, settings: Settings, celery: Celery | None, events: EventSink):
        self.settings = settings
        self.celery = celery
        self.events = events
        self.sessions = session_factory(settings.database_url)

    # -- the run -----------------------------------------------------------------------

    def run(self, run_id: str) -> str | None:
        """Evaluate the condition and start the batch; returns the run's status after,
        None for an unknown run. Idempotent."""
        with self.sessions() as s:
            run = s.get(ScheduleRun, run_id)
            schedule = s.get(Schedule, run.schedule_id) if run is not None else None
            if run is None or schedule is None:
                logger.warning("schedule run %s: no such run", run_id)
                return None
            if run.status != "running" or run.batch_id is not None:
                return run.status
        with tracing.schedule_run(schedule.id, str(schedule.tenant_id)) as span:
            status = self._run(schedule, run_id)
            tracing.record_outcome(span, status)
        return status

    def _run(self, schedule: Schedule, run_id: str) -> str:
        condition = schedule.spec.get("condition")
        value = None
        if condition:
            try:
                value = self._condition_value(schedule)
            except (ValueError, SunriseError) as exc:
                reason = getattr(exc, "detail", None) or str(exc)
                return self._finish(run_id, "failed", reason=f"condition: {reason}"[:500])
            if not holds(condition, value):
                logger.info("schedule %s run %s: condition %s %s %s is false; skipped",
                            schedule.id, run_id, value, condition["op"], condition["value"])
                return self._finish(run_id, "skipped", condition_value=value,
                                    reason="the condition is false")
        try:
            with self.sessions() as s:  # a tenant over a block budget starts no batch
                admit_work(s, schedule.tenant_id)
            return self._start_batch(schedule, run_id, value)
        except SunriseError as exc:  # over budget, or the dataset is gone or not ready
            return self._finish(run_id, "failed", reason=exc.detail[:500])

    def _condition_value(self, schedule: Schedule) -> float:
        """The condition's number, as the schedule's user may see the data: the
        dataset's row policies and masks binding them apply to its SQL too, and a live
        dataset's runs on its source (opened for it, closed after)."""
        sql = schedule.spec["condition"]["sql"]
        with self.sessions() as s:
            owner = principal_for_job(s, schedule)  # its user as they are now, or the tenant
            dataset_id, version = pin_dataset(s, schedule.tenant_id,
                                              schedule.spec.get("dataset_id"), owner)
            target = dataset_target(s, dataset_id, version, owner)
        result = run_on_dataset(self.settings, target, sql, shared_sandbox=True,
                                label=f"schedule {schedule.id} condition")
        if result.is_error:
            raise ValueError(result.error or "the SQL failed")
        return first_number(result.rows, result.columns)

    def _start_batch(self, schedule: Schedule, run_id: str, value: float | None) -> str:
        spec = schedule.spec
        try:
            with self.sessions.begin() as s:  # its jobs run as the owner, under their policies
                batch = batch_rows.create_batch(
                    s, tenant_id=schedule.tenant_id, questions=spec["questions"],
                    model=self.settings.model, title=schedule.name,
                    mode=spec.get("mode", "standard"),
                    conversation=spec.get("conversation", "separate"),
                    dataset=pin_dataset(s, schedule.tenant_id, spec.get("dataset_id"),
                                        principal_for_job(s, schedule)),
                    user_id=schedule.user_id)
                taken = s.execute(update(ScheduleRun).where(
                    ScheduleRun.id == run_id, ScheduleRun.batch_id.is_(None),
                    ScheduleRun.status == "running").values(
                    batch_id=batch.id, condition_value=value)).rowcount
                if not taken:
                    raise _Taken()
                released = batch_rows.release_ready(s, batch.id)
                views = [job_to_dict(j) for j in s.scalars(
                    select(Job).where(Job.batch_id == batch.id).order_by(Job.batch_index))]
        except _Taken:
            logger.info("schedule run %s: started by another message", run_id)
            return "running"
        economy = batch.mode == "economy"
        if self.celery is not None:
            announce(self.events, self.celery, self.sessions, views,
                     send=[] if economy else released, queue=REPORTS_QUEUE)
            if economy:
                self.celery.send_task(RUN_ECONOMY_BATCH, args=[batch.id], task_id=batch.id,
                                      queue=REPORTS_QUEUE)
        logger.info("schedule %s run %s: batch %s started (%d questions)", schedule.id, run_id,
                    batch.id, batch.total)
        return "running"

    def _finish(self, run_id: str, status: str, *, reason: str | None = None,
                condition_value: float | None = None,
                deliveries: list[dict[str, Any]] | None = None) -> str:
        values: dict[str, Any] = {"status": status, "finished_at": utcnow(), "reason": reason}
        if condition_value is not None:
            values["condition_value"] = condition_value
        if deliveries is not None:
            values["deliveries"] = deliveries
        with self.sessions.begin() as s:
            done = s.execute(update(ScheduleRun).where(
                ScheduleRun.id == run_id, ScheduleRun.status == "running")
                .values(**values)).rowcount
        if done:
            get_metrics().schedule_run_finished(status)
        return status

    # -- the delivery ------------------------------------------------------------------

    def on_batch_assembled(self, batch_id: str) -> None:
        """The batch coordinator's hook: a batch that is a schedule's run is delivered."""
        with self.sessions() as s:
            run_id = s.scalar(select(ScheduleRun.id).where(ScheduleRun.batch_id == batch_id,
                                                           ScheduleRun.status == "running"))
        if run_id is None:
            return
        if self.celery is None:
            self.deliver(run_id)
            return
        from shared.celery_factory import DELIVER_SCHEDULE_RUN

        try:
            self.celery.send_task(DELIVER_SCHEDULE_RUN, args=[run_id], queue=REPORTS_QUEUE)
        except Exception as exc:  # the tick sends it again (worker/schedules/tick.py)
            logger.warning("schedule run %s: delivery not sent: %s", run_id, exc)

    def deliver(self, run_id: str, now: dt.datetime | None = None) -> str | None:
        """Send the run's report to every target not yet reached; returns the run's final
        status, or None when another delivery holds the run or there is nothing to do."""
        now = now or utcnow()
        with self.sessions.begin() as s:
            claimed = s.execute(update(ScheduleRun).where(
                ScheduleRun.id == run_id, ScheduleRun.status == "running",
                ScheduleRun.batch_id.is_not(None),
                or_(ScheduleRun.delivery_claimed_at.is_(None),
                    ScheduleRun.delivery_claimed_at < now - DELIVERY_LEASE))
                .values(delivery_claimed_at=now)).rowcount
        if not claimed:
            return None
        with self.sessions() as s:
            run = s.get(ScheduleRun, run_id)
            schedule = s.get(Schedule, run.schedule_id)
            batch = s.get(Batch, run.batch_id)
            s.expunge_all()
        if batch is None or batch.status != "completed" or batch.report is None:
            with self.sessions.begin() as s:
                s.execute(update(ScheduleRun).where(ScheduleRun.id == run_id)
                          .values(delivery_claimed_at=None))
            return None
        document = unpack(batch.report)
        records = list(run.deliveries or [])
        targets = schedule.spec["deliver"]
        records += [None] * (len(targets) - len(records))
        for index, target in enumerate(targets):
            if records[index] and records[index]["status"] == "delivered":
                continue
            outcome = self._send(schedule, run, document, target, index)
            records[index] = {"type": target["type"], "target": describe(target),
                              "status": outcome.status, "attempts": outcome.attempts,
                              "last_error": outcome.last_error}
            get_metrics().schedule_delivery(target["type"], outcome.status)
            with self.sessions.begin() as s:
                s.execute(update(ScheduleRun).where(ScheduleRun.id == run_id)
                          .values(deliveries=list(records)))
        delivered = sum(r["status"] == "delivered" for r in records)
        status = ("delivered" if delivered == len(records)
                  else "failed" if delivered == 0 else "partially_delivered")
        logger.info("schedule %s run %s: %s (%d of %d targets)", schedule.id, run_id, status,
                    delivered, len(records))
        return self._finish(run_id, status, deliveries=records,
                            reason=None if status == "delivered" else "some targets failed")

    def _send(self, schedule: Schedule, run: ScheduleRun, document: dict[str, Any],
              target: dict[str, Any], index: int) -> Outcome:
        what = f"schedule {schedule.id} run {run.id}: {target['type']} delivery {index}"
        public = self.settings.public_url
        if target["type"] == "email":
            msg = messages.email_message(senders.sender_address(self.settings), schedule, run,
                                         document, target["to"], public)
            return senders.send_email(self.settings, msg, what)
        if target["type"] == "slack":
            import json

            body = json.dumps(messages.slack_message(schedule, run, document, public)).encode()
            return senders.send_http(self.settings, target, index, body, secret=None, what=what)
        body = messages.webhook_payload(schedule, run, document, public)
        return senders.send_http(self.settings, target, index, body, secret=schedule.secret,
                                 what=what)


class _Taken(Exception):
    """Another message started this run's batch."""
