"""The append-only audit log: who did what, when, to what.

``record`` is the only writer; nothing updates or deletes a row (on MariaDB triggers
refuse both, migration 0012). ``actor`` names who acted: ``user:<external id>`` or
``key:<key prefix>`` (a service key acting for the tenant), ``cli`` for the command line.
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

from sqlalchemy import bindparam, insert, select
from sqlalchemy.orm import Session

from shared.models import AuditEntry, ToolCall, iso, utcnow

# Actions, one name each; a job's entry leaves ``policies`` for the row-policy work.
ACTIONS = frozenset({
    "job", "user.create", "user.update", "user.delete", "key.create", "key.revoke",
    "dataset.create", "dataset.update", "dataset.delete", "dataset.access", "sign_in",
    "sign_out", "schedule.create", "schedule.update", "schedule.delete",
    "verified_query.create", "verified_query.delete", "tenant.update",
})


def record(session: Session, tenant_id: int, action: str, *, actor: str,
           user_id: int | None = None, target: str | None = None,
           details: dict[str, Any] | None = None) -> AuditEntry:
    """Append one entry in the caller's transaction (it commits or rolls back with the
    change it describes). Raises ValueError on an action not in ``ACTIONS``."""
    if action not in ACTIONS:
        raise ValueError(f"unknown audit action {action!r}")
    entry = AuditEntry(tenant_id=tenant_id, at=utcnow(), user_id=user_id, actor=actor[:220],
                       action=action, target=None if target is None else str(target)[:200],
                       details=details)
    session.add(entry)
    session.flush()
    return entry


def entry_view(entry: AuditEntry) -> dict[str, Any]:
    return {"id": entry.id, "at": iso(entry.at), "user_id": entry.user_id,
            "actor": entry.actor, "action": entry.action, "target": entry.target,
            "details": entry.details}


def entries(session: Session, tenant_id: int, *, since: dt.datetime | None = None,
            until: dt.datetime | None = None, user_id: int | None = None,
            action: str | None = None, after_id: int | None = None,
            limit: int = 100) -> list[AuditEntry]:
    """``tenant_id``'s entries in order of id (= order of writing), after ``after_id``
    (the keyset cursor), filtered as given. Read-only."""
    query = select(AuditEntry).where(AuditEntry.tenant_id == tenant_id)
    if since is not None:
        query = query.where(AuditEntry.at >= since)
    if until is not None:
        query = query.where(AuditEntry.at < until)
    if user_id is not None:
        query = query.where(AuditEntry.user_id == user_id)
    if action is not None:
        query = query.where(AuditEntry.action == action)
    if after_id is not None:
        query = query.where(AuditEntry.id > after_id)
    return list(session.scalars(query.order_by(AuditEntry.id).limit(limit)))


def export(session: Session, tenant_id: int, **filters) -> Iterator[dict[str, Any]]:
    """Every matching entry as JSON-ready dicts, read a page at a time."""
    after_id = None
    while True:
        page = entries(session, tenant_id, after_id=after_id, limit=1000, **filters)
        yield from (entry_view(e) for e in page)
        if len(page) < 1000:
            return
        after_id = page[-1].id


# A job's entry is written with its final write, on the driver path (no ORM): the SQL it
# ran is read from its attempt's tool calls, stored in the same transaction just before.
_calls = ToolCall.__table__.c
_JOB_SQL = (select(_calls.sql).where(_calls.job_id == bindparam("job_id"),
                                     _calls.attempt == bindparam("attempt"),
                                     _calls.tool == "execute_sql")
            .order_by(_calls.id))
_INSERT_ENTRY = insert(AuditEntry.__table__)


def record_job(conn, job, status: str, *, at: dt.datetime,
               policies: list | None = None) -> None:
    """Append a finished job's entry on ``conn`` (a Connection or a
    ``shared.driver_sql`` connection, in the finish's transaction): its user, dataset,
    question, status, every SQL statement its attempt ran, and the policies applied."""
    statements = [row.sql for row in conn.execute(
        _JOB_SQL, {"job_id": job.id, "attempt": job.attempt}).all()]
    user_id = getattr(job, "user_id", None)
    conn.execute(_INSERT_ENTRY, {
        "tenant_id": job.tenant_id, "at": at, "user_id": user_id,
        "actor": f"user:{user_id}" if user_id is not None else "tenant", "action": "job",
        "target": job.id, "details": {
            "status": status, "question": job.message, "dataset_id": job.dataset_id,
            "dataset_version": job.dataset_version, "batch_id": job.batch_id,
            "sql": statements, "policies": policies}})
