"""In-process jobs: the same runner as the worker, with no Redis and no Celery."""
from __future__ import annotations

from typing import Any

from shared.config import Settings
from shared.db import session_scope
from shared.job_view import job_to_dict
from shared.keys import get_or_create_tenant
from shared.migrate import upgrade
from shared.models import Conversation, Job, Message, new_id
from worker.runner import EventSink, JobRunner

LOCAL_TENANT = "local"


def ensure_sample_db(settings: Settings) -> None:
    """Build the bundled sample DuckDB if the configured file does not exist yet."""
    from pathlib import Path

    from sunrise.sample_data import build_sample_db

    if not Path(settings.duckdb_path).exists():
        build_sample_db(settings.duckdb_path)


def ask_local(settings: Settings, question: str, *, conversation_id: str | None = None,
              events: EventSink | None = None, runner: JobRunner | None = None) -> dict[str, Any]:
    """Create a job for ``question`` and run it right here; returns the finished job."""
    upgrade(settings.database_url)
    ensure_sample_db(settings)
    with session_scope(settings.database_url) as s:
        tenant = get_or_create_tenant(s, LOCAL_TENANT)
        conversation = s.get(Conversation, conversation_id) if conversation_id else None
        if conversation is None:
            conversation = Conversation(id=new_id(), tenant_id=tenant.id, title=question[:200])
            s.add(conversation)
            s.flush()
        job = Job(id=new_id(), tenant_id=tenant.id, conversation_id=conversation.id, message=question,
                  model=settings.model)
        s.add(job)
        s.add(Message(conversation_id=conversation.id, job_id=job.id, role="user", text=question))
        s.flush()
        job_id = job.id
    (runner or JobRunner(settings, events=events)).run(job_id)
    with session_scope(settings.database_url) as s:
        return job_to_dict(s.get(Job, job_id))
