"""Batch use cases: submit, read (healing a stalled batch), stream progress, report.

Every query is tenant-scoped: another tenant's batch is NotFound.
"""
from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterator
from typing import Any

import redis
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from api.idempotency import after_race, body_hash, earlier, not_anothers
from api.limits import check_questions
from api.links import batch_event_data, batch_links, linked_batch, linked_job
from api.resources import Resources
from api.schemas.batches import BatchCreate
from api.sse import already_delivered, event_stream, stored_end
from api.sse_subscribers import subscriber_callbacks
from shared import batch_rows
from shared.batch_view import load_view
from shared.budgets import admit_work
from shared.celery_factory import ASSEMBLE_BATCH, REPORTS_QUEUE, RUN_ECONOMY_BATCH
from shared.dataset_state import pin_dataset
from shared.db_retry import retry_lock_conflicts
from shared.enqueue import announce, enqueue_jobs
from shared.errors import Conflict, NotFound, ValidationFailed
from shared.job_view import job_to_dict
from shared.models import Batch, Job, is_id
from shared.outbound import OutboundPolicy
from shared.principal import Principal
from shared.reports.document import unpack
from shared.webhooks import check_webhook_url

logger = logging.getLogger(__name__)

# A status read re-checks a running batch at most this often (see _heal).
HEAL_EVERY_S = 5
# The economy driver may wait its turn on the reports queue; re-sent only after this.
ECONOMY_RESEND_S = 120
BATCH_STREAM_MAX_S = 900


def submit_batch(res: Resources, tenant_id: int, body: BatchCreate,
                 idempotency_key: str | None,
                 principal: Principal | None = None) -> tuple[dict[str, Any], bool]:
    """Create the batch and its jobs (of ``principal``'s user, on a dataset granted to
    it), and start it. Returns (accepted view, created).

    The same Idempotency-Key with the same body returns the first batch; with another
    body raises Conflict. Raises ValidationFailed past ``max_batch_questions`` or for
    a webhook URL the outbound policy refuses, BudgetExceeded over a ``block`` budget, RateLimited past the tenant's question
    rate (N questions cost N). A transaction ended by a deadlock or a lock wait timeout
    is run again (a few times).
    """
    limit = res.settings.max_batch_questions
    if len(body.questions) > limit:
        raise ValidationFailed(f"A batch holds at most {limit} questions; "
                               f"this one has {len(body.questions)}.")
    if body.webhook_url:
        check_webhook_url(body.webhook_url, OutboundPolicy.from_settings(res.settings),
                          require_https=res.settings.env == "production")
    check_questions(res, tenant_id, len(body.questions))
    committed = _commit_batch(res, tenant_id, body, idempotency_key, body_hash(body),
                              principal)
    if committed.existing is not None:
        return committed.existing, False
    batch = committed.batch
    logger.info("batch %s accepted: %d questions, %s mode, %s conversations", batch.id,
                batch.total, batch.mode, batch.conversation_mode)
    try:
        res.batch_events.publish(batch.id, "queued", committed.view)
    except Exception as exc:  # the stream is a convenience; the rows are the truth
        logger.warning("batch %s: could not publish its queued event: %s", batch.id, exc)
    # Every job is announced; the released ones are sent now, the held ones in their
    # turn, and in economy mode the driver takes them all.
    announce(res.events, res.celery, res.sessions, committed.job_views,
             send=[] if batch.mode == "economy" else committed.released, queue=REPORTS_QUEUE)
    if batch.mode == "economy":
        _start_economy(res, batch.id)
    return committed.accepted, True


@dataclasses.dataclass
class _Committed:
    """What one submit transaction wrote (or, ``existing``, the earlier batch it found)."""

    existing: dict[str, Any] | None = None
    batch: Batch | None = None
    released: list[str] = dataclasses.field(default_factory=list)
    accepted: dict[str, Any] = dataclasses.field(default_factory=dict)
    job_views: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    view: dict[str, Any] = dataclasses.field(default_factory=dict)


@retry_lock_conflicts
def _commit_batch(res: Resources, tenant_id: int, body: BatchCreate, idempotency_key: str | None,
                  digest: str, principal: Principal | None = None) -> _Committed:
    with res.session() as s:
        if idempotency_key:
            existing = earlier(s, Batch, tenant_id, idempotency_key, digest)
            if existing is not None:
                not_anothers(existing, None if principal is None or principal.is_admin
                             else principal.user_id)
                return _Committed(existing=_accepted_of(s, existing))
        admit_work(s, tenant_id)
        dataset = pin_dataset(s, tenant_id, body.dataset_id, principal)
        try:
            batch = batch_rows.create_batch(
                s, tenant_id=tenant_id, questions=body.questions, model=res.settings.model,
                title=body.title.strip(), mode=body.mode, conversation=body.conversation,
                webhook_url=body.webhook_url, idempotency_key=idempotency_key,
                request_hash=digest, dataset=dataset,
                user_id=principal.user_id if principal else None)
        except IntegrityError:
            s.rollback()
            return _Committed(existing=after_race(
                res.session, Batch, tenant_id, idempotency_key, digest, _accepted_of,
                otherwise="A concurrent request created this batch; retry."))
        released = batch_rows.release_ready(s, batch.id)
        jobs = list(s.scalars(select(Job).where(Job.batch_id == batch.id)
                              .order_by(Job.batch_index)))
        return _Committed(batch=batch, released=released,
                          accepted=_accepted(batch, [j.id for j in jobs]),
                          job_views=[linked_job(job_to_dict(j)) for j in jobs],
                          view=linked_batch(load_view(s, batch)))


def _start_economy(res: Resources, batch_id: str) -> None:
    try:
        res.celery.send_task(RUN_ECONOMY_BATCH, args=[batch_id], task_id=batch_id,
                             queue=REPORTS_QUEUE)
        res.redis.set(f"sunrise:batch-economy-sent:{batch_id}", 1, ex=ECONOMY_RESEND_S)
    except Exception as exc:  # the next status read sends it again
        logger.warning("batch %s: could not queue economy mode: %s", batch_id, exc)


def _accepted(batch: Batch, job_ids: list[str]) -> dict[str, Any]:
    return {"batch_id": batch.id, "job_ids": job_ids, "status": batch.status,
            "total": batch.total, "links": batch_links(batch.id)}


def _accepted_of(s, batch: Batch) -> dict[str, Any]:
    return _accepted(batch, batch_rows.ordered_job_ids(s, batch.id))


def _load(s, tenant_id: int, batch_id: str) -> Batch:
    batch = s.scalar(select(Batch).where(Batch.id == batch_id, Batch.tenant_id == tenant_id)) \
        if is_id(batch_id) else None
    if batch is None:
        raise NotFound(f"No batch {batch_id}.")
    return batch


def get_batch(res: Resources, tenant_id: int, batch_id: str) -> dict[str, Any]:
    """The batch view; a running batch is healed first (at most every few seconds)."""
    with res.session() as s:
        status = _load(s, tenant_id, batch_id).status
    if status == "running":
        _heal(res, batch_id)
    with res.session() as s:
        return linked_batch(load_view(s, _load(s, tenant_id, batch_id)))


def _heal(res: Resources, batch_id: str) -> None:
    """Restart whatever a lost message or a crash left waiting; never raises.

    Jobs cancelled through the API and workers that died between a job's commit and
    its after-finish hook leave a batch with nothing queued to move it on: here the
    next held jobs are released, the economy driver is sent again, or the assembly
    is asked for once every job has ended. All of it is idempotent.
    """
    try:
        if not res.redis.set(f"sunrise:batch-heal:{batch_id}", 1, nx=True, ex=HEAL_EVERY_S):
            return
        with res.session() as s:
            batch = s.get(Batch, batch_id)
            released = batch_rows.release_ready(s, batch_id)
            counts = batch_rows.status_counts(s, batch_id)
            held = batch_rows.held_job_ids(s, batch_id) if batch.mode == "economy" else []
        if released:
            logger.warning("batch %s: released %d stalled jobs", batch_id, len(released))
            enqueue_jobs(res.celery, res.sessions, released, queue=REPORTS_QUEUE)
        if batch_rows.is_done(counts, batch.total):
            res.celery.send_task(ASSEMBLE_BATCH, args=[batch_id], queue=REPORTS_QUEUE)
        elif held and not counts["running"] and res.redis.set(
                f"sunrise:batch-economy-sent:{batch_id}", 1, nx=True, ex=ECONOMY_RESEND_S):
            logger.warning("batch %s: economy mode not started; sending it again", batch_id)
            res.celery.send_task(RUN_ECONOMY_BATCH, args=[batch_id], task_id=batch_id,
                                 queue=REPORTS_QUEUE)
    except Exception as exc:
        logger.warning("batch %s: could not check for stalls: %s", batch_id, exc)


def batch_event_stream(res: Resources, tenant_id: int, batch_id: str,
                       after: str) -> Iterator[str] | None:
    """SSE frames of the batch (``queued``, one ``progress`` per finished question, then
    ``completed``) after ``after``; None when the client already saw the end.
    Raises NotFound."""
    view = get_batch(res, tenant_id, batch_id)
    if view["status"] == "completed":
        try:
            res.batch_events.publish(batch_id, "completed", view)  # no-op when already there
            if already_delivered(res.batch_events, batch_id, after):
                return None
        except redis.RedisError as exc:
            logger.warning("batch %s: events unavailable (%s); sending the stored end",
                           batch_id, exc)
            return stored_end("completed", view)

    def terminal_from_db() -> tuple[str, dict] | None:
        latest = get_batch(res, tenant_id, batch_id)
        return ("completed", latest) if latest["status"] == "completed" else None

    on_open, on_close = subscriber_callbacks(res.redis, BATCH_STREAM_MAX_S, kind="batch")
    return event_stream(res.batch_events, batch_id, after,
                        heartbeat_s=res.settings.sse_heartbeat_s, max_s=BATCH_STREAM_MAX_S,
                        terminal_from_db=terminal_from_db, on_open=on_open, on_close=on_close,
                        hub=res.batch_event_hub, present=batch_event_data)


def load_report(res: Resources, tenant_id: int, batch_id: str) -> dict[str, Any]:
    """The stored report document. Raises NotFound, or Conflict while still running."""
    with res.session() as s:
        batch = _load(s, tenant_id, batch_id)
        blob = batch.report
        status = batch.status
    if status != "completed" or blob is None:
        view = get_batch(res, tenant_id, batch_id)
        raise Conflict(f"Batch {batch_id} is still running ({view['done']} of {view['total']} "
                       "questions done); its report is assembled when all have ended.",
                       retry_after=5, progress=view["progress"])
    return unpack(blob)
