"""In-process jobs: the same runner as the worker, with no Redis and no Celery."""
from __future__ import annotations

from typing import Any

from shared.config import Settings
from shared.db import session_scope
from shared.events import EventSink
from shared.job_state import create_job
from shared.job_view import job_to_dict
from shared.keys import get_or_create_tenant
from shared.migrate import upgrade
from shared.models import Conversation, Job
from worker.runner import JobRunner

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
        job_id = create_job(s, tenant_id=tenant.id, conversation_id=conversation and conversation.id,
                            message=question, model=settings.model).id
    (runner or JobRunner(settings, events=events)).run(job_id)
    with session_scope(settings.database_url) as s:
        return job_to_dict(s.get(Job, job_id))
