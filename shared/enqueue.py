"""Hand a committed job to the queue. Failure is logged, never raised: the row is
already safe in the database and the reaper enqueues it once the broker is back."""
from __future__ import annotations

import logging

from celery import Celery
from sqlalchemy import update
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker

from shared.models import Job, utcnow
from shared.queue import CHAT_QUEUE, RUN_JOB

logger = logging.getLogger(__name__)


def enqueue_jobs(celery: Celery, sessions: sessionmaker[Session], job_ids: list[str],
                 *, queue: str = CHAT_QUEUE) -> int:
    """Send one run task per job and stamp ``enqueued_at``; returns how many were sent."""
    sent: list[str] = []
    try:
        with celery.producer_or_acquire() as producer:
            for job_id in job_ids:
                celery.send_task(RUN_JOB, args=[job_id], queue=queue, producer=producer)
                sent.append(job_id)
    except Exception as exc:  # broker down: the reaper will pick the rest up
        logger.warning("could not enqueue %d of %d jobs (%s); the reaper will retry",
                       len(job_ids) - len(sent), len(job_ids), exc)
    if sent:
        try:
            with sessions.begin() as s:
                # By primary key only, in a fixed order: a status predicate made
                # MariaDB lock the status index before the row, the reverse of a
                # worker's claim, and the two deadlocked. Stamping a job that is
                # already running is harmless.
                s.execute(update(Job).where(Job.id.in_(sorted(sent)))
                          .values(enqueued_at=utcnow()))
        except DBAPIError as exc:
            # E.g. a deadlock with a worker claiming the job this instant. The jobs are
            # sent; an unstamped one that is still queued is sent again by the reaper,
            # and the claim guard keeps a duplicate message from running it twice.
            logger.warning("sent %d jobs but could not stamp enqueued_at: %s", len(sent), exc)
    return len(sent)
