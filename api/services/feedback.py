"""Ratings of answers: one per user and job, changeable; admins read a dataset's."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import select

from api.resources import Resources
from shared.errors import BadRequest, Conflict, Forbidden, NotFound
from shared.models import Job, JobFeedback, is_id, iso, utcnow
from shared.principal import Principal
from shared.relied_on_sql import relied_on_sql

MAX_LISTED = 500


def user_key(principal: Principal) -> str:
    """Who a rating belongs to: the user, or the tenant for a key acting without one."""
    return f"user:{principal.user_id}" if principal.user_id is not None else "tenant"


def rate_job(res: Resources, principal: Principal, job_id: str, rating: str,
             comment: str | None) -> dict:
    """Create or replace ``principal``'s rating of the job. Raises NotFound for another
    tenant's or an unknown job, Conflict for a job without an answer."""
    with res.session() as s:
        job = s.scalar(select(Job).where(Job.id == job_id, Job.tenant_id == principal.tenant_id)) \
            if is_id(job_id) else None
        if job is None:
            raise NotFound(f"No job {job_id}.")
        if job.status != "succeeded":
            raise Conflict(f"Job {job_id} is {job.status}: only an answer can be rated.")
        key = user_key(principal)
        row = s.scalar(select(JobFeedback).where(JobFeedback.job_id == job_id,
                                                 JobFeedback.user_key == key).with_for_update())
        now = utcnow()
        if row is None:
            row = JobFeedback(tenant_id=principal.tenant_id, job_id=job_id, user_key=key,
                              user_id=principal.user_id, dataset_id=job.dataset_id,
                              created_at=now)
            s.add(row)
        row.rating, row.comment, row.updated_at = rating, comment, now
        s.flush()
        return _view(row)


def list_feedback(res: Resources, principal: Principal, dataset_id: str, rating: str | None,
                  since: str | None) -> dict:
    """The dataset's ratings, newest first, with each job's question, answer and the SQL
    it relied on. Raises Forbidden for non-admins, BadRequest for a bad ``from``."""
    if not principal.is_admin:
        raise Forbidden("Only admins read feedback.")
    stmt = select(JobFeedback, Job).join(Job, Job.id == JobFeedback.job_id).where(
        JobFeedback.tenant_id == principal.tenant_id, JobFeedback.dataset_id == dataset_id)
    if rating:
        stmt = stmt.where(JobFeedback.rating == rating)
    if since:
        stmt = stmt.where(JobFeedback.updated_at >= _instant(since))
    with res.session() as s:
        rows = s.execute(stmt.order_by(JobFeedback.updated_at.desc()).limit(MAX_LISTED)).all()
        return {"items": [_view(fb, job, relied_on_sql(s, job)) for fb, job in rows]}


def _instant(text: str) -> dt.datetime:
    try:
        value = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise BadRequest(f"'from' must be an ISO 8601 time, not {text[:40]!r}.") from None
    return value.astimezone(dt.UTC).replace(tzinfo=None) if value.tzinfo else value


def _view(row: JobFeedback, job: Job | None = None, sql: str | None = None) -> dict:
    view = {"job_id": row.job_id, "rating": row.rating, "comment": row.comment,
            "user": str(row.user_id) if row.user_id is not None else "tenant",
            "created_at": iso(row.created_at), "updated_at": iso(row.updated_at)}
    if job is not None:
        view.update(question=job.message, answer_text=job.answer_text, sql=sql)
    return view
