"""A batch's rows in the app database: creating one, holding and releasing its jobs,
counting them and summing their figures. (How a batch is shown: ``shared/batch_view.py``.)

A batch is one ``batches`` row plus N ordinary jobs (``batch_id``, ``batch_index``)
that run on the same machinery as any other job. Its jobs start *held*
(``shared.job_state.held_values``): ``queued``, but in a way neither of the reaper's
rules ("queued but never sent", "sent too long ago") ever picks up, so nothing runs
them before the batch releases them. Releasing clears the mark and enqueues the job.

Release rules (:func:`release_ready`):

- separate conversations: the first question runs alone so that it writes the
  database's system prompt to the prompt cache; when it ends, every other question
  is released at once and reads that cache instead of writing it again.
- shared conversation: one question at a time, in order; the next is released when
  the previous one ends, whatever its outcome, so each sees the answers before it.
- economy mode: nothing is released; the economy driver claims held jobs itself.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from shared.celery_factory import REPORTS_QUEUE
from shared.job_state import (
    RELEASE,
    STATUSES,
    TERMINAL,
    create_job,
    held_clause,
    held_values,
    is_held,
    start_conversation,
)
from shared.models import Batch, Job, ToolCall, new_id
from shared.usage_figures import JOB_FIELDS, read_sums, sum_columns


def create_batch(s: Session, *, tenant_id: int, questions: list[str], model: str, title: str = "",
                 mode: str = "standard", conversation: str = "separate",
                 webhook_url: str | None = None, idempotency_key: str | None = None,
                 request_hash: str | None = None,
                 dataset: tuple[str | None, int | None] = (None, None),
                 user_id: int | None = None) -> Batch:
    """Insert the batch, its conversations, its held jobs and their user messages.

    Every job asks about ``dataset`` (id and pinned version; none: the built-in one);
    the batch, its conversations and jobs belong to ``user_id`` (None: the tenant's).
    Nothing is enqueued here; call :func:`release_ready` (same or later transaction)
    and enqueue what it returns once committed. Flushes, so the ids are usable.
    """
    batch = Batch(id=new_id(), tenant_id=tenant_id, title=title, mode=mode,
                  conversation_mode=conversation, status="running", total=len(questions),
                  webhook_url=webhook_url, idempotency_key=idempotency_key,
                  request_hash=request_hash, webhook_status="pending" if webhook_url else None,
                  user_id=user_id)
    s.add(batch)
    shared = (start_conversation(s, tenant_id, title or questions[0], user_id).id
              if conversation == "shared" else None)
    for index, question in enumerate(questions):
        create_job(s, tenant_id=tenant_id, conversation_id=shared, message=question,
                   model=model, batch_id=batch.id, batch_index=index, queue=REPORTS_QUEUE,
                   dataset_id=dataset[0], dataset_version=dataset[1], user_id=user_id,
                   **held_values())
    s.flush()
    return batch


def release_ready(s: Session, batch_id: str) -> list[str]:
    """Un-hold the jobs the batch's rules allow to run now; returns their ids.

    Locks the batch row, so concurrent callers (a finishing job, a status read) take
    turns; only jobs still held are touched, so a job is never released twice. The
    caller enqueues the returned ids after commit.
    """
    batch = s.scalar(select(Batch).where(Batch.id == batch_id).with_for_update())
    if batch is None or batch.mode == "economy":
        return []
    rows = s.execute(select(Job.id, Job.status, Job.enqueued_at)
                     .where(Job.batch_id == batch_id).order_by(Job.batch_index)).all()
    held = [r.id for r in rows if is_held(r)]
    if not held:
        return []
    active = any(r.status == "running" or (r.status == "queued" and not is_held(r))
                 for r in rows)
    if batch.conversation_mode != "shared" and rows[0].status in TERMINAL:
        chosen = held
    else:
        chosen = [] if active else held[:1]
    if chosen:
        RELEASE.apply(s, job_ids=chosen)
    return chosen


def held_job_ids(s: Session, batch_id: str) -> list[str]:
    return list(s.scalars(select(Job.id).where(Job.batch_id == batch_id, held_clause(Job))
                          .order_by(Job.batch_index)))


def status_counts(s: Session, batch_id: str) -> dict[str, int]:
    """Jobs of the batch per status, every status present (held jobs count as queued)."""
    counts = dict.fromkeys(STATUSES, 0)
    for status, n in s.execute(select(Job.status, func.count()).where(Job.batch_id == batch_id)
                               .group_by(Job.status)):
        counts[status] = counts.get(status, 0) + n
    return counts


def usage_totals(s: Session, batch_id: str) -> dict[str, Any]:
    """The batch's summed usage figures so far."""
    row = s.execute(select(*sum_columns(Job, JOB_FIELDS)).where(Job.batch_id == batch_id)).one()
    return read_sums(row, JOB_FIELDS)


def is_done(counts: dict[str, int], total: int) -> bool:
    return sum(counts[k] for k in TERMINAL) >= total


def ordered_job_ids(s: Session, batch_id: str) -> list[str]:
    return list(s.scalars(select(Job.id).where(Job.batch_id == batch_id)
                          .order_by(Job.batch_index)))


def answer_queries(s: Session, jobs: list[Job]) -> dict[str, list[dict[str, Any]]]:
    """The queries each job's last attempt ran successfully, by job id, in query-id
    order: ``[{"query_id", "sql", "rows"}]`` (a statement repeated from the per-job
    cache appears once). What an answer's figures and charts come from."""
    attempts = {job.id: job.attempt for job in jobs}
    found: dict[str, dict[int, dict[str, Any]]] = {job_id: {} for job_id in attempts}
    if not attempts:
        return {}
    rows = s.execute(select(ToolCall.job_id, ToolCall.attempt, ToolCall.query_id, ToolCall.sql,
                            ToolCall.rows)
                     .where(ToolCall.job_id.in_(list(attempts)), ToolCall.is_error.is_(False),
                            ToolCall.query_id.is_not(None))
                     .order_by(ToolCall.id))
    for job_id, attempt, query_id, sql, total in rows:
        if attempt == attempts[job_id]:
            found[job_id].setdefault(query_id, {"query_id": query_id, "sql": sql, "rows": total})
    return {job_id: [by_id[k] for k in sorted(by_id)] for job_id, by_id in found.items()}
