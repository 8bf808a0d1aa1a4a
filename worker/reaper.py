"""The reaper (run by Celery beat): nothing accepted is ever lost.

- a job still ``queued`` that never reached the broker (or whose message was lost)
  is enqueued again;
- a ``running`` job whose heartbeat went stale (its worker died) goes back to
  ``queued`` and is enqueued again, or fails with ``worker_lost`` after
  ``max_attempts``.
Every change is a guarded UPDATE, so two reapers at once do no harm.
"""
from __future__ import annotations

import datetime as dt
import logging

from celery import Celery
from sqlalchemy import or_, select, update

from shared.config import Settings
from shared.db import session_factory
from shared.enqueue import enqueue_jobs
from shared.models import Job, utcnow

logger = logging.getLogger(__name__)


class Reaper:
    def __init__(self, settings: Settings, celery: Celery):
        self.settings = settings
        self.celery = celery
        self.sessions = session_factory(settings.database_url)

    def run_once(self) -> dict[str, int]:
        now = utcnow()
        stale = now - dt.timedelta(seconds=self.settings.stale_after_s)
        requeue = now - dt.timedelta(seconds=self.settings.requeue_queued_after_s)
        never_sent = now - dt.timedelta(seconds=2)
        failed = 0
        with self.sessions.begin() as s:
            dead = s.execute(select(Job.id, Job.attempt).where(
                Job.status == "running", Job.heartbeat_at < stale)).all()
            back: list[str] = []
            for job_id, attempt in dead:
                exhausted = attempt >= self.settings.max_attempts
                values = (dict(status="failed", error_code="worker_lost", finished_at=now,
                               error_message="The worker running this job stopped responding "
                                             f"{attempt} times; giving up.")
                          if exhausted else dict(status="queued", enqueued_at=None))
                changed = s.execute(update(Job).where(
                    Job.id == job_id, Job.status == "running", Job.attempt == attempt,
                    Job.heartbeat_at < stale).values(**values)).rowcount
                if changed and exhausted:
                    failed += 1
                elif changed:
                    back.append(job_id)
            lost = s.scalars(select(Job.id).where(
                Job.status == "queued",
                or_((Job.enqueued_at.is_(None)) & (Job.created_at < never_sent),
                    Job.enqueued_at < requeue),
            ).limit(1000)).all()
        todo = sorted(set(back) | set(lost))
        sent = enqueue_jobs(self.celery, self.sessions, todo) if todo else 0
        if dead or todo:
            logger.warning("reaper: %d stale running, %d failed for good, %d re-enqueued",
                           len(dead), failed, sent)
        return {"stale": len(dead), "failed": failed, "requeued": sent}
