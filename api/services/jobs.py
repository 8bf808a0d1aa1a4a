"""Job use cases: submit, read (with long-poll), subscribe (SSE), cancel. Every query is
tenant-scoped."""
from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from types import SimpleNamespace

import redis
from flask import Response
from sqlalchemy import bindparam, func, or_, select
from sqlalchemy.exc import IntegrityError

from api.event_hub import HubUnavailable, Subscription
from api.idempotency import after_race, body_hash, not_anothers, same_body
from api.links import job_event_data, linked_job
from api.resources import Resources
from api.schemas.jobs import JobCreate
from api.sse import already_delivered, event_stream, stored_end
from api.sse_subscribers import subscriber_callbacks
from api.woken_answers import presented_json, woken_answer
from shared.budgets import admit_work
from shared.dataset_state import pin_dataset
from shared.db_retry import retry_lock_conflicts
from shared.enqueue import announce
from shared.errors import Conflict, NotFound, RateLimited
from shared.job_state import ACTIVE, ASK_CANCEL, CANCEL, TERMINAL, insert_job
from shared.job_view import job_to_dict
from shared.models import Conversation, Job, is_id, utcnow
from shared.principal import Principal

jobs = Job.__table__
conversations = Conversation.__table__

logger = logging.getLogger(__name__)

RECHECK_HEARTBEATS = 3
POLL_S = 1.0  # how often a long-poll reads the database while Redis is unavailable


def submit_job(res: Resources, tenant_id: int, body: JobCreate,
               idempotency_key: str | None,
               principal: Principal | None = None) -> tuple[dict, bool]:
    """Create a queued job (and its user message) and enqueue it. With ``principal`` the
    job belongs to its user; a viewer or analyst may continue only their own
    conversation and ask only datasets granted to them (others: NotFound, as another
    tenant's).

    Returns (job view, created). The same Idempotency-Key with the same body returns the
    first job; with a different body raises Conflict. The job pins its dataset's
    current version now (``pin_dataset``): what it was asked about is what it answers
    from, even if a refresh lands while it waits. Raises NotFound for a conversation or
    dataset of another tenant, Conflict for a dataset with no ready version, Conflict while that conversation already has a job in flight,
    BudgetExceeded over a ``block`` budget (``shared/budgets.py``; an idempotent repeat
    of an accepted job is still answered), RateLimited past the tenant's concurrency cap (its question is counted by the route,
    ``api/limits.py``). A transaction MariaDB ends as a deadlock victim or on a lock
    wait timeout is run again (a few times).
    """
    view, created = _commit_job(res, tenant_id, body, idempotency_key, body_hash(body),
                                principal)
    if created:
        # Committed already stamped as enqueued (one transaction fewer per submit);
        # a job the broker refuses has the stamp cleared again, for the reaper.
        announce(res.events, res.celery, res.sessions, [view], stamped=True)
    return view, created


@retry_lock_conflicts
def _commit_job(res: Resources, tenant_id: int, body: JobCreate, idempotency_key: str | None,
                digest: str, principal: Principal | None) -> tuple[dict, bool]:
    # Prebuilt Core statements on the pooled connection's DBAPI cursor
    # (``shared/driver_sql.py``): no ORM session nor Core execution on the path every
    # question takes. An IntegrityError leaves the block, so the transaction (and a
    # conversation it inserted) is rolled back before the race is looked into.
    try:
        owner = None if principal is None or principal.is_admin else principal.user_id
        with res.driver.begin() as conn:
            if idempotency_key:
                existing = conn.execute(_EARLIER, {"tenant_id": tenant_id,
                                                   "idempotency_key": idempotency_key}).first()
                if existing is not None:
                    not_anothers(existing, owner)
                    same_body(existing, digest)
                    return _view(existing), False
            admit_work(conn, tenant_id)
            _check_concurrency(res, conn, tenant_id)
            conversation_id = _conversation_for(conn, tenant_id, body, owner)
            dataset_id, version = pin_dataset(conn, tenant_id, body.dataset_id, principal)
            job = insert_job(conn, tenant_id=tenant_id, conversation_id=conversation_id,
                             message=body.message, model=res.settings.model,
                             enqueued_at=utcnow(), idempotency_key=idempotency_key,
                             request_hash=digest, dataset_id=dataset_id,
                             dataset_version=version,
                             user_id=principal.user_id if principal else None)
    except IntegrityError:
        return after_race(res.session, Job, tenant_id, idempotency_key, digest,
                          lambda _s, job: _view(job),
                          otherwise="A concurrent request changed this conversation; "
                                    "retry."), False
    return _view(SimpleNamespace(**job)), True


# Built once: every submit runs them. Status lists are spelled as ORs of equalities:
# the driver path runs plain statements only (an IN list is an expanding parameter).
_ACTIVE = or_(*(jobs.c.status == status for status in ACTIVE))
_EARLIER = select(jobs).where(jobs.c.tenant_id == bindparam("tenant_id"),
                              jobs.c.idempotency_key == bindparam("idempotency_key"))
_ACTIVE_INTERACTIVE = select(func.count()).select_from(jobs).where(
    jobs.c.tenant_id == bindparam("tenant_id"), _ACTIVE, jobs.c.batch_id.is_(None))
_OWN_CONVERSATION = select(conversations.c.id, conversations.c.user_id).where(
    conversations.c.id == bindparam("conversation_id"),
    conversations.c.tenant_id == bindparam("tenant_id")).with_for_update()
_JOB_IN_FLIGHT = select(jobs.c.id).where(
    jobs.c.conversation_id == bindparam("conversation_id"), _ACTIVE).limit(1)


def _check_concurrency(res: Resources, conn, tenant_id: int) -> None:
    cap = res.settings.max_concurrent_jobs
    active = conn.scalar(_ACTIVE_INTERACTIVE, {"tenant_id": tenant_id})
    if active >= cap:
        raise RateLimited(f"You already have {active} jobs in flight (limit {cap}); "
                          "wait for some to finish.", retry_after=5)


def _conversation_for(conn, tenant_id: int, body: JobCreate, owner: int | None) -> str | None:
    """The id of the conversation the question continues (locked to the commit), or None
    for a new one."""
    if body.conversation_id is None:
        return None
    row = conn.execute(_OWN_CONVERSATION, {
        "conversation_id": body.conversation_id, "tenant_id": tenant_id}).first()
    if row is None or (owner is not None and row.user_id != owner):
        raise NotFound(f"No conversation {body.conversation_id}.")
    conversation_id = row.id
    busy = conn.scalar(_JOB_IN_FLIGHT, {"conversation_id": conversation_id})
    if busy:
        raise Conflict(f"Conversation {conversation_id} is still answering job {busy}; "
                       "wait for it to finish before asking the next question.",
                       job_id=busy)
    return conversation_id


def _view(job: Job | SimpleNamespace) -> dict:
    return linked_job(job_to_dict(job))


def load_job(res: Resources, tenant_id: int, job_id: str) -> dict:
    """The job's public view; raises NotFound for unknown ids and other tenants' jobs."""
    with res.session() as s:
        job = s.scalar(select(Job).where(Job.id == job_id, Job.tenant_id == tenant_id)) \
            if is_id(job_id) else None
        if job is None:
            raise NotFound(f"No job {job_id}.")
        return _view(job)


def _recheck_s(res: Resources) -> float:
    # The worker publishes the terminal event right after its commit, so the database
    # is consulted only as a safety net (a worker that died in between, a job the
    # reaper ended): every few heartbeats of silence, never per event.
    return RECHECK_HEARTBEATS * res.settings.sse_heartbeat_s


def wait_for_job(res: Resources, tenant_id: int, job_id: str,
                 wait_s: float) -> dict | Response:
    """The job, as soon as it is terminal or after ``wait_s`` seconds, whichever is first.

    While waiting it holds no database connection (each read is a short session), no
    Redis connection and, under gevent workers, no thread: it waits on the process's
    event hub for the job's terminal event, and answers with the event's job (its JSON
    rendered once for every client it wakes, and the clients woken with it not kept
    waiting by this connection's bookkeeping: ``api/woken_answers.py``). Without
    Redis it polls the database once a second instead. Raises NotFound.
    """
    if wait_s <= 0 or not is_id(job_id):
        return load_job(res, tenant_id, job_id)  # an id that is no job's: 404 at once
    deadline = time.monotonic() + wait_s
    # The stream position first, then the one read of the job: an end published before
    # `after` was taken was committed before that read, and one published later comes
    # after `after`, so the subscription cannot miss it.
    after = _stream_position(res, job_id)
    view = load_job(res, tenant_id, job_id)
    if view["status"] in TERMINAL:
        return view
    if after is not None:
        try:
            with res.event_hub.subscribe(job_id, after) as subscription:
                return _await_end(res, tenant_id, job_id, subscription, deadline)
        except redis.RedisError as exc:
            logger.warning("long-poll on job %s falls back to polling: %s", job_id, exc)
    while time.monotonic() < deadline and view["status"] in ACTIVE:
        time.sleep(min(POLL_S, max(0.0, deadline - time.monotonic())))
        view = load_job(res, tenant_id, job_id)
    return view


def _stream_position(res: Resources, job_id: str) -> str | None:
    """The id of the job's newest event, or None when Redis cannot say (the long-poll
    then polls the database)."""
    try:
        return res.events.last_id(job_id)
    except redis.RedisError as exc:
        logger.warning("long-poll on job %s falls back to polling: %s", job_id, exc)
        return None


def _await_end(res: Resources, tenant_id: int, job_id: str, subscription: Subscription,
               deadline: float) -> dict | Response:
    recheck_s = _recheck_s(res)
    next_check = time.monotonic() + recheck_s
    while (now := time.monotonic()) < deadline:
        try:
            events = subscription.get(timeout=min(deadline, next_check) - now)
        except HubUnavailable:  # Redis trouble: the database tells the end meanwhile
            events, recheck_s = [], POLL_S
            next_check = min(next_check, time.monotonic() + POLL_S)
        terminal = next((e for e in events if e.is_terminal), None)
        if terminal is not None:
            return woken_answer(presented_json(job_id, terminal, job_event_data))
        if time.monotonic() >= next_check:
            view = load_job(res, tenant_id, job_id)
            if view["status"] in TERMINAL:
                return view
            next_check = time.monotonic() + recheck_s
    return load_job(res, tenant_id, job_id)


def job_event_stream(res: Resources, tenant_id: int, job_id: str, after: str) -> Iterator[str] | None:
    """The SSE frames of the job after stream id ``after``, or None when the client has
    already seen the terminal event (answered 204, which stops EventSource reconnecting).

    A finished job whose terminal event is missing from the stream (expired, or never
    published) gets it published now, so a late subscriber still receives it at once.
    Raises NotFound.
    """
    view = load_job(res, tenant_id, job_id)
    ended = view["status"] in TERMINAL
    if ended:
        try:
            res.events.publish(job_id, view["status"], view)  # a no-op when it is there
            if already_delivered(res.events, job_id, after):
                return None
        except redis.RedisError as exc:
            logger.warning("job %s: events unavailable (%s); sending the stored end", job_id, exc)
            return stored_end(view["status"], view)

    def terminal_from_db() -> tuple[str, dict] | None:
        latest = load_job(res, tenant_id, job_id)
        return (latest["status"], latest) if latest["status"] in TERMINAL else None

    max_s = res.settings.job_deadline_s + 120
    on_open, on_close = subscriber_callbacks(res.redis, max_s)  # the open-streams gauge
    return event_stream(res.events, job_id, after, heartbeat_s=res.settings.sse_heartbeat_s,
                        max_s=max_s, recheck_s=_recheck_s(res), terminal_from_db=terminal_from_db,
                        present=job_event_data,
                        # An ended job's stream is complete: read it, nothing to wait for.
                        hub=None if ended else res.event_hub, on_open=on_open,
                        on_close=on_close)


@retry_lock_conflicts
def cancel_job(res: Resources, tenant_id: int, job_id: str) -> dict:
    """Cancel a queued job at once, or flag a running one for the loop's next round
    boundary (its partial usage is still recorded when it stops).

    Returns the job view with ``cancel_requested: true``; a queued job's view is
    already ``cancelled`` and its terminal event is published. Raises NotFound, or
    Conflict when the job already ended.
    """
    now = utcnow()
    with res.session() as s:
        job = s.scalar(select(Job).where(Job.id == job_id, Job.tenant_id == tenant_id)) \
            if is_id(job_id) else None
        if job is None:
            raise NotFound(f"No job {job_id}.")
        # Two guarded updates, so a worker claiming the job concurrently either finds it
        # cancelled or is flagged: there is no state in which the request is lost.
        if CANCEL.apply(s, job_id=job_id, now=now):
            terminal = True
        elif ASK_CANCEL.apply(s, job_id=job_id):
            terminal = False
        else:
            s.refresh(job)
            raise Conflict(f"Job {job_id} already ended ({job.status}); nothing to cancel.",
                           status_now=job.status)
        s.refresh(job)
        view = _view(job)
    logger.info("job %s: cancel requested (%s)", job_id, view["status"])
    if terminal:
        try:
            res.events.publish(job_id, "cancelled", view)
        except redis.RedisError as exc:  # the SSE and long-poll database rechecks cover it
            logger.warning("job %s: could not publish cancelled event: %s", job_id, exc)
    return {**view, "cancel_requested": True}
