"""Creating and reading jobs straight in the app database, for worker-level tests."""
from __future__ import annotations

import uuid

from sqlalchemy import select

from shared.db import session_scope
from shared.job_view import job_to_dict
from shared.keys import get_or_create_tenant
from shared.models import Conversation, Job, LlmCall, Message, ToolCall, new_id


def create_job(settings, question: str, *, conversation_id: str | None = None,
               tenant: str = "worker-tests") -> tuple[str, str]:
    """Insert a queued job and its user message; returns (job_id, conversation_id)."""
    with session_scope(settings.database_url) as s:
        tenant_row = get_or_create_tenant(s, tenant)
        if conversation_id is None:
            conversation_id = new_id()
            s.add(Conversation(id=conversation_id, tenant_id=tenant_row.id, title=question[:50]))
        job_id = new_id()
        s.add(Job(id=job_id, tenant_id=tenant_row.id, conversation_id=conversation_id,
                  message=question, model=settings.model))
        s.add(Message(conversation_id=conversation_id, job_id=job_id, role="user", text=question))
    return job_id, conversation_id


def job_view(settings, job_id: str) -> dict:
    with session_scope(settings.database_url) as s:
        return job_to_dict(s.get(Job, job_id))


def llm_calls(settings, job_id: str) -> list[LlmCall]:
    with session_scope(settings.database_url) as s:
        return list(s.scalars(select(LlmCall).where(LlmCall.job_id == job_id).order_by(LlmCall.id)))


def tool_calls(settings, job_id: str) -> list[ToolCall]:
    with session_scope(settings.database_url) as s:
        return list(s.scalars(select(ToolCall).where(ToolCall.job_id == job_id)
                              .order_by(ToolCall.id)))


def marker() -> str:
    """A unique tag to find one test's requests in the offline model's shared log."""
    return f"[t-{uuid.uuid4().hex[:10]}]"


def requests_with(fake_llm, tag: str) -> list[dict]:
    """Bodies of /v1/messages requests whose messages mention ``tag``, in order."""
    return [e["body"] for e in fake_llm.message_entries() if tag in str(e["body"]["messages"])]


def entries_with(fake_llm, tag: str) -> list[dict]:
    return [e for e in fake_llm.message_entries() if tag in str(e["body"]["messages"])]
