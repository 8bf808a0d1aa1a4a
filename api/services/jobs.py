"""Job use cases: submit, read (with long-poll), cancel. Every query is tenant-scoped."""
from __future__ import annotations

import hashlib
import json
import logging
import time

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError

from api.context import Services
from api.schemas import JobCreate
from shared.enqueue import enqueue_jobs
from shared.errors import Conflict, NotFound, RateLimited
from shared.job_view import job_to_dict
from shared.models import Conversation, Job, Message, new_id, utcnow

logger = logging.getLogger(__name__)

ACTIVE = ("queued", "running")


def request_hash(payload: dict) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def submit_job(svc: Services, tenant_id: int, body: JobCreate,
               idempotency_key: str | None) -> tuple[dict, bool]:
    """Create a queued job (and its user message) and enqueue it.

    Returns (job view, created). The same Idempotency-Key with the same body returns the
    first job; with a different body raises Conflict. Raises NotFound for a conversation
    of another tenant, Conflict while that conversation already has a job in flight,
    RateLimited past the tenant's concurrency cap.
    """
    digest = request_hash(body.model_dump())
    with svc.session() as s:
        if idempotency_key:
            existing = _by_idempotency_key(s, tenant_id, idempotency_key, digest)
            if existing is not None:
                return job_to_dict(existing), False
        _check_concurrency(svc, s, tenant_id)
        conversation = _conversation_for(s, tenant_id, body)
        job = Job(id=new_id(), tenant_id=tenant_id, conversation_id=conversation.id, message=body.message,
                  model=svc.settings.model, idempotency_key=idempotency_key,
                  request_hash=digest)
        s.add(job)
        s.add(Message(conversation_id=conversation.id, job_id=job.id, role="user",
                      text=body.message))
        conversation.updated_at = utcnow()
        try:
            s.flush()
        except IntegrityError:
            s.rollback()
            return _after_idempotency_race(svc, tenant_id, idempotency_key, digest), False
        view = job_to_dict(job)
    _announce(svc, [view])
    return view, True


def _by_idempotency_key(s, tenant_id: int, key: str, digest: str) -> Job | None:
    job = s.scalar(select(Job).where(Job.tenant_id == tenant_id, Job.idempotency_key == key))
    if job is not None and job.request_hash != digest:
        raise Conflict("This Idempotency-Key was already used with a different request body.")
    return job


def _after_idempotency_race(svc: Services, tenant_id: int, key: str | None, digest: str) -> dict:
    with svc.session() as s:
        job = _by_idempotency_key(s, tenant_id, key, digest) if key else None
        if job is None:
            raise Conflict("A concurrent request changed this conversation; retry.")
        return job_to_dict(job)


def _check_concurrency(svc: Services, s, tenant_id: int) -> None:
    cap = svc.settings.max_concurrent_jobs
    active = s.scalar(select(func.count()).select_from(Job).where(
        Job.tenant_id == tenant_id, Job.status.in_(ACTIVE), Job.batch_id.is_(None)))
    if active >= cap:
        raise RateLimited(f"You already have {active} jobs in flight (limit {cap}); "
                          "wait for some to finish.", headers={"Retry-After": "5"})


def _conversation_for(s, tenant_id: int, body: JobCreate) -> Conversation:
    if body.conversation_id is None:
        conversation = Conversation(id=new_id(), tenant_id=tenant_id, title=body.message.strip()[:200])
        s.add(conversation)
        return conversation
    conversation = s.scalar(select(Conversation).where(
        Conversation.id == body.conversation_id, Conversation.tenant_id == tenant_id)
        .with_for_update())
    if conversation is None:
        raise NotFound(f"No conversation {body.conversation_id}.")
    busy = s.scalar(select(Job.id).where(Job.conversation_id == conversation.id,
                                         Job.status.in_(ACTIVE)).limit(1))
    if busy:
        raise Conflict(f"Conversation {conversation.id} is still answering job {busy}; "
                       "wait for it to finish before asking the next question.",
                       job_id=busy)
    return conversation


def _announce(svc: Services, views: list[dict]) -> None:
    """Enqueue committed jobs and publish their ``queued`` events; never raises."""
    enqueue_jobs(svc.celery, svc.sessions, [v["job_id"] for v in views])
    try:
        for view in views:
            svc.events.publish(view["job_id"], "queued", view)
    except Exception as exc:
        logger.warning("could not publish queued events: %s", exc)


def load_job(svc: Services, tenant_id: int, job_id: str) -> dict:
    with svc.session() as s:
        job = s.scalar(select(Job).where(Job.id == job_id, Job.tenant_id == tenant_id))
        if job is None:
            raise NotFound(f"No job {job_id}.")
        return job_to_dict(job)


def wait_for_job(svc: Services, tenant_id: int, job_id: str, wait_s: float) -> dict:
    """The job, once terminal or after ``wait_s`` seconds, whichever comes first.

    While waiting it holds no database connection: it blocks on the job's event stream.
    """
    view = load_job(svc, tenant_id, job_id)
    if wait_s <= 0 or view["status"] in ("succeeded", "failed", "cancelled"):
        return view
    deadline = time.monotonic() + wait_s
    try:
        after = svc.events.last_id(job_id)
        view = load_job(svc, tenant_id, job_id)  # re-read: the end may precede `after`
        while view["status"] not in ("succeeded", "failed", "cancelled"):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            events = svc.events.read(job_id, after, block_ms=max(1, int(remaining * 1000)))
            if events:
                after = events[-1].id
                terminal = next((e for e in events if e.is_terminal), None)
                if terminal is not None:
                    return terminal.data
    except Exception as exc:  # Redis trouble: degrade to polling the database
        logger.warning("long-poll on job %s falls back to polling: %s", job_id, exc)
        while time.monotonic() < deadline and view["status"] in ACTIVE:
            time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
            view = load_job(svc, tenant_id, job_id)
        return view
    return load_job(svc, tenant_id, job_id)


def cancel_job(svc: Services, tenant_id: int, job_id: str) -> dict:
    """Cancel at once if queued; flag for the next round boundary if running.

    Raises NotFound, or Conflict when the job already ended.
    """
    now = utcnow()
    with svc.session() as s:
        job = s.scalar(select(Job).where(Job.id == job_id, Job.tenant_id == tenant_id))
        if job is None:
            raise NotFound(f"No job {job_id}.")
        if s.execute(update(Job).where(Job.id == job_id, Job.status == "queued").values(
                status="cancelled", cancel_requested=True, finished_at=now,
                error_code="cancelled", error_message="The job was cancelled at your request.")
                ).rowcount:
            s.flush()
            s.refresh(job)
            view = job_to_dict(job)
            terminal = True
        elif s.execute(update(Job).where(Job.id == job_id, Job.status == "running")
                       .values(cancel_requested=True)).rowcount:
            s.refresh(job)
            view, terminal = job_to_dict(job), False
        else:
            s.refresh(job)
            raise Conflict(f"Job {job_id} already ended ({job.status}); nothing to cancel.",
                           status_now=job.status)
    if terminal:
        try:
            svc.events.publish(job_id, "cancelled", view)
        except Exception as exc:
            logger.warning("job %s: could not publish cancelled event: %s", job_id, exc)
    view["cancel_requested"] = True
    return view
