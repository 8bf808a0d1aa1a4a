"""/v1/conversations: history of a tenant's conversations, newest first."""
from __future__ import annotations

import base64
import datetime as dt

from flask import Blueprint, g
from sqlalchemy import delete, or_, select

from api.auth import authenticate
from api.context import services
from api.requests import parse_query
from api.schemas import ConversationList, ConversationOut, ListQuery
from api.spec import spec
from shared.errors import BadRequest, Conflict, NotFound
from shared.job_view import iso
from shared.models import Conversation, Job, Message

bp = Blueprint("conversations", __name__, url_prefix="/v1/conversations")
bp.before_request(authenticate)


def _summary(c: Conversation) -> dict:
    return {"conversation_id": c.id, "title": c.title, "created_at": iso(c.created_at),
            "updated_at": iso(c.updated_at)}


def _encode_cursor(c: Conversation) -> str:
    return base64.urlsafe_b64encode(f"{c.updated_at.isoformat()}|{c.id}".encode()).decode()


def _decode_cursor(cursor: str) -> tuple[dt.datetime, str]:
    try:
        stamp, _, cid = base64.urlsafe_b64decode(cursor.encode()).decode().partition("|")
        return dt.datetime.fromisoformat(stamp), cid
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest("The cursor is not one this API returned.") from exc


@spec.doc("GET", "/v1/conversations", "Conversations, newest first (cursor pagination).",
          query=ListQuery, responses={200: ConversationList}, tag="conversations")
@bp.get("")
def list_conversations():
    query = parse_query(ListQuery)
    stmt = select(Conversation).where(Conversation.tenant_id == g.tenant_id)
    if query.cursor:
        stamp, cid = _decode_cursor(query.cursor)
        stmt = stmt.where(or_(Conversation.updated_at < stamp,
                              (Conversation.updated_at == stamp) & (Conversation.id < cid)))
    with services().session() as s:
        rows = s.scalars(stmt.order_by(Conversation.updated_at.desc(), Conversation.id.desc())
                         .limit(query.limit + 1)).all()
        more = len(rows) > query.limit
        rows = rows[: query.limit]
        return {"items": [_summary(c) for c in rows],
                "next_cursor": _encode_cursor(rows[-1]) if more else None}


def _owned(s, conversation_id: str) -> Conversation:
    c = s.scalar(select(Conversation).where(Conversation.id == conversation_id,
                                            Conversation.tenant_id == g.tenant_id))
    if c is None:
        raise NotFound(f"No conversation {conversation_id}.")
    return c


@spec.doc("GET", "/v1/conversations/{conversation_id}", "A conversation with its messages.",
          responses={200: ConversationOut}, tag="conversations")
@bp.get("/<conversation_id>")
def get_conversation(conversation_id: str):
    with services().session() as s:
        c = _owned(s, conversation_id)
        messages = s.scalars(select(Message).where(Message.conversation_id == c.id)
                             .order_by(Message.id)).all()
        return {**_summary(c), "messages": [
            {"role": m.role, "text": m.text, "charts": m.charts, "job_id": m.job_id,
             "created_at": iso(m.created_at)} for m in messages]}


@spec.doc("DELETE", "/v1/conversations/{conversation_id}",
          "Delete a conversation and its messages.", responses={204: None, 409: None},
          tag="conversations")
@bp.delete("/<conversation_id>")
def delete_conversation(conversation_id: str):
    with services().session() as s:
        c = _owned(s, conversation_id)
        busy = s.scalar(select(Job.id).where(Job.conversation_id == c.id,
                                             Job.status.in_(("queued", "running"))).limit(1))
        if busy:
            raise Conflict(f"Job {busy} is still answering in this conversation; cancel it first.")
        s.execute(delete(Message).where(Message.conversation_id == c.id))
        s.delete(c)
    return "", 204
