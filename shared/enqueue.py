"""Hand committed jobs to the queue. Failure is logged, never raised: the rows are
already safe in the database and the reaper enqueues them once the broker is back."""
from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from celery import Celery
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker

from shared import job_state, tracing
from shared.celery_factory import CHAT_QUEUE, DATASETS_QUEUE, IMPORT_DATASET, RUN_JOB
from shared.events import EventSink
from shared.models import utcnow
from shared.redis_client import redis_gate

logger = logging.getLogger(__name__)


def announce(events: EventSink, celery: Celery, sessions: sessionmaker[Session],
             views: Sequence[dict[str, Any]], *, send: Sequence[str] | None = None,
             queue: str = CHAT_QUEUE, stamped: bool = False) -> int:
    """Publish each committed job's ``queued`` event, then enqueue; never raises.

    In that order: a fast worker's ``started`` (even its terminal event) must never
    precede ``queued`` in the job's stream, whose last entry is the terminal one.
    ``views`` are the jobs' public views; ``send`` the ids to enqueue (default: all of
    them; a batch's held jobs are announced but wait for their turn). ``stamped`` as in
    :func:`enqueue_jobs`. Returns how many were sent.
    """
    try:
        for view in views:
            events.publish(view["job_id"], "queued", view)
    except Exception as exc:  # the stream is a convenience; the rows are the truth
        logger.warning("could not publish queued events: %s", exc)
    ids = [view["job_id"] for view in views] if send is None else list(send)
    return enqueue_jobs(celery, sessions, ids, queue=queue, stamped=stamped) if ids else 0


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
        with celery.producer_or_acquire() as producer, \
                tracing.enqueue(queue, len(job_ids)) as headers:
            for job_id in job_ids:
                # The job id as the task id: `celery inspect` and Flower show job ids.
                # The queue is declared by the workers that consume it, not once per
                # message, and the arguments' repr is known: Celery's generic ones
                # (a copy of the queue bound per send, saferepr) cost more than the rest.
                celery.send_task(RUN_JOB, args=[job_id], task_id=job_id, queue=queue,
                                 producer=producer, declare=[], argsrepr=repr([job_id]),
                                 kwargsrepr="{}", headers=headers)
                sent.append(job_id)
    except Exception as exc:  # broker down or hung: the reaper will pick the rest up
        if not gate.should_skip():
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
            job_state.STAMP.apply(s.connection(), job_ids=job_ids, sent_at=when)
    except DBAPIError as exc:
        # E.g. a deadlock with a worker claiming the job this instant. A sent job left
        # unstamped and still queued is sent again by the reaper, and the claim guard
        # keeps a duplicate message from running it twice; an unsent job left stamped
        # is re-sent by the reaper once its stamp is `requeue_queued_after_s` old.
        logger.warning("could not %s enqueued_at of %d jobs: %s",
                       "clear" if when is None else "stamp", len(job_ids), exc)


def send_import(celery: Celery, dataset_id: str, version: int) -> bool:
    """Send the import of ``version`` of a committed dataset; never raises. Unsent (broker
    down), the reaper sends it later: the row says what is being built."""
    gate = redis_gate(str(celery.conf.broker_url))
    try:
        gate.check()
        celery.send_task(IMPORT_DATASET, args=[dataset_id, version],
                         task_id=f"{dataset_id}.v{version}", queue=DATASETS_QUEUE)
        return True
    except Exception as exc:
        if not gate.should_skip():
            gate.failed(exc)
        logger.warning("dataset %s: import of version %s not sent (%s); the reaper will "
                       "retry", dataset_id, version, exc)
        return False
