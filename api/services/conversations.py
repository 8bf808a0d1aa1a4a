"""Conversation history use cases: list, read, delete. Every query is tenant-scoped.

A conversation is ordered by its last activity (``updated_at``: a new question or a
finished answer moves it to the top). Deleting one removes its messages; the jobs
that answered in it stay readable by id, because they carry the tenant's usage.
"""
from __future__ import annotations

import logging

from sqlalchemy import delete, select

from api.pagination import after_cursor, page
from api.resources import Resources
from shared.db_retry import retry_lock_conflicts
from shared.errors import Conflict, NotFound
from shared.job_state import ACTIVE
from shared.models import Conversation, Job, Message, is_id, iso

logger = logging.getLogger(__name__)


def _summary(c: Conversation) -> dict:
    return {"conversation_id": c.id, "title": c.title, "created_at": iso(c.created_at),
            "updated_at": iso(c.updated_at)}


def list_conversations(res: Resources, tenant_id: int, *, limit: int,
                       cursor: str | None, owner: int | None = None) -> dict:
    """One page, most recently active first: ``{"items", "next_cursor"}``; with
    ``owner``, only that user's conversations.

    Keyset pagination on (updated_at, id), so pages neither repeat nor skip rows that
    stay put. Raises BadRequest for a cursor this API did not issue.
    """
    query = select(Conversation).where(Conversation.tenant_id == tenant_id)
    if owner is not None:
        query = query.where(Conversation.user_id == owner)
    stmt = after_cursor(query, Conversation.updated_at, Conversation.id, cursor)
    with res.session() as s:
        rows = s.scalars(stmt.limit(limit + 1)).all()
        return page(rows, limit, lambda c: (c.updated_at, c.id), _summary)


def _owned(s, tenant_id: int, conversation_id: str, *, lock: bool = False) -> Conversation:
    stmt = select(Conversation).where(Conversation.id == conversation_id,
                                      Conversation.tenant_id == tenant_id)
    c = s.scalar(stmt.with_for_update() if lock else stmt) if is_id(conversation_id) else None
    if c is None:
        raise NotFound(f"No conversation {conversation_id}.")
    return c


def get_conversation(res: Resources, tenant_id: int, conversation_id: str) -> dict:
    """The conversation and its messages, oldest first; raises NotFound."""
    with res.session() as s:
        c = _owned(s, tenant_id, conversation_id)
        rows = s.execute(
            select(Message, Job.numbers, Job.data_as_of)
            .outerjoin(Job, (Job.id == Message.job_id) & (Message.role == "assistant"))
            .where(Message.conversation_id == c.id).order_by(Message.id)).all()
        return {**_summary(c), "messages": [
            {"role": m.role, "text": m.text, "charts": m.charts, "numbers": numbers,
             "job_id": m.job_id, "created_at": iso(m.created_at), "data_as_of": iso(as_of)}
            for m, numbers, as_of in rows]}


@retry_lock_conflicts
def delete_conversation(res: Resources, tenant_id: int, conversation_id: str) -> None:
    """Delete the conversation and its messages.

    The row is locked first, the same lock a new question on this conversation takes,
    so a question cannot slip in between the check and the delete. Raises NotFound,
    or Conflict while one of its jobs is queued or running.
    """
    with res.session() as s:
        c = _owned(s, tenant_id, conversation_id, lock=True)
        busy = s.scalar(select(Job.id).where(Job.conversation_id == c.id,
                                             Job.status.in_(ACTIVE)).limit(1))
        if busy:
            raise Conflict(f"Job {busy} is still answering in this conversation; "
                           "cancel it or wait for it first.", job_id=busy)
        s.execute(delete(Message).where(Message.conversation_id == c.id))
        s.delete(c)
    logger.info("conversation %s of tenant %s deleted", conversation_id, tenant_id)
