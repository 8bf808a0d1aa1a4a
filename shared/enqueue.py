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
from shared.redis_client import redis_gate

logger = logging.getLogger(__name__)


def enqueue_jobs(celery: Celery, sessions: sessionmaker[Session], job_ids: list[str],
                 *, queue: str = CHAT_QUEUE, stamped: bool = False) -> int:
    """Send one run task per job and stamp ``enqueued_at``; returns how many were sent.

    ``stamped`` says the jobs were committed with ``enqueued_at`` already set (the API
    does it in the submit transaction, saving a transaction per submit): then nothing
    is written after a successful send, and the jobs that could not be sent get their
    stamp cleared, so the reaper sees them as never sent.
    """
    sent: list[str] = []
    gate = redis_gate(str(celery.conf.broker_url))
    try:
        # The broker is the Redis that just failed to answer: do not wait on it too.
        gate.check()
        with celery.producer_or_acquire() as producer:
            for job_id in job_ids:
                celery.send_task(RUN_JOB, args=[job_id], queue=queue, producer=producer)
                sent.append(job_id)
    except Exception as exc:  # broker down or hung: the reaper will pick the rest up
        if not gate.is_open():
            gate.failed(exc)
        logger.warning("could not enqueue %d of %d jobs (%s); the reaper will retry",
                       len(job_ids) - len(sent), len(job_ids), exc)
    if stamped:
        unsent = sorted(set(job_ids) - set(sent))
        if unsent:
            _stamp(sessions, unsent, None)
    elif sent:
        _stamp(sessions, sorted(sent), utcnow())
    return len(sent)


def _stamp(sessions: sessionmaker[Session], job_ids: list[str], when) -> None:
    try:
        with sessions.begin() as s:
            # By primary key only, in a fixed order: a status predicate made
            # MariaDB lock the status index before the row, the reverse of a
            # worker's claim, and the two deadlocked. Stamping a job that is
            # already running is harmless.
            s.execute(update(Job).where(Job.id.in_(job_ids)).values(enqueued_at=when)
                      .execution_options(synchronize_session=False))
    except DBAPIError as exc:
        # E.g. a deadlock with a worker claiming the job this instant. A sent job left
        # unstamped and still queued is sent again by the reaper, and the claim guard
        # keeps a duplicate message from running it twice; an unsent job left stamped
        # is re-sent by the reaper once its stamp is `requeue_queued_after_s` old.
        logger.warning("could not %s enqueued_at of %d jobs: %s",
                       "clear" if when is None else "stamp", len(job_ids), exc)
