"""Conversation history use cases: list, read, delete. Every query is tenant-scoped.

A conversation is ordered by its last activity (``updated_at``: a new question or a
finished answer moves it to the top). Deleting one removes its messages; the jobs
that answered in it stay readable by id, because they carry the tenant's usage.
"""
from __future__ import annotations

import base64
import binascii
import datetime as dt
import logging

from sqlalchemy import delete, or_, select

from api.resources import Resources
from shared.db_retry import retry_lock_conflicts
from shared.errors import BadRequest, Conflict, NotFound
from shared.job_state import ACTIVE
from shared.models import Conversation, Job, Message, is_id, iso

logger = logging.getLogger(__name__)



def _summary(c: Conversation) -> dict:
    return {"conversation_id": c.id, "title": c.title, "created_at": iso(c.created_at),
            "updated_at": iso(c.updated_at)}


def _encode_cursor(c: Conversation) -> str:
    return base64.urlsafe_b64encode(f"{c.updated_at.isoformat()}|{c.id}".encode()).decode()


def _decode_cursor(cursor: str) -> tuple[dt.datetime, str]:
    try:
        stamp, sep, cid = base64.urlsafe_b64decode(cursor.encode()).decode().partition("|")
        if not sep or not cid:
            raise ValueError("no id")
        return dt.datetime.fromisoformat(stamp), cid
    except (ValueError, UnicodeDecodeError, binascii.Error) as exc:
        raise BadRequest("The cursor is not one this API returned.") from exc


def list_conversations(res: Resources, tenant_id: int, *, limit: int,
                       cursor: str | None) -> dict:
    """One page, most recently active first: ``{"items", "next_cursor"}``.

    Keyset pagination on (updated_at, id), so pages neither repeat nor skip rows that
    stay put. Raises BadRequest for a cursor this API did not issue.
    """
    stmt = select(Conversation).where(Conversation.tenant_id == tenant_id)
    if cursor:
        stamp, cid = _decode_cursor(cursor)
        stmt = stmt.where(or_(Conversation.updated_at < stamp,
                              (Conversation.updated_at == stamp) & (Conversation.id < cid)))
    with res.session() as s:
        rows = s.scalars(stmt.order_by(Conversation.updated_at.desc(), Conversation.id.desc())
                         .limit(limit + 1)).all()
        more = len(rows) > limit
        rows = rows[:limit]
        return {"items": [_summary(c) for c in rows],
                "next_cursor": _encode_cursor(rows[-1]) if more else None}


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
            select(Message, Job.numbers)
            .outerjoin(Job, (Job.id == Message.job_id) & (Message.role == "assistant"))
            .where(Message.conversation_id == c.id).order_by(Message.id)).all()
        return {**_summary(c), "messages": [
            {"role": m.role, "text": m.text, "charts": m.charts, "numbers": numbers,
             "job_id": m.job_id, "created_at": iso(m.created_at)} for m, numbers in rows]}


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
