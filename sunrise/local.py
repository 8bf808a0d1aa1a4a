"""In-process jobs: the same runner as the worker, with no Redis and no Celery."""
from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from shared.config import Settings
from shared.dataset_state import pin_dataset
from shared.db import session_scope
from shared.errors import NotFound
from shared.events import EventSink
from shared.job_state import create_job
from shared.job_view import job_to_dict
from shared.keys import get_or_create_tenant
from shared.migrate import upgrade
from shared.models import Conversation, Dataset, Job
from worker.jobs.runner import JobRunner

LOCAL_TENANT = "local"


def ensure_sample_db(settings: Settings) -> None:
    """Build the bundled sample DuckDB if the configured file does not exist yet."""
    from pathlib import Path

    from sunrise.sample_data import build_sample_db

    if not Path(settings.duckdb_path).exists():
        build_sample_db(settings.duckdb_path)


def ask_local(settings: Settings, question: str, *, conversation_id: str | None = None,
              dataset_id: str | None = None, events: EventSink | None = None,
              runner: JobRunner | None = None) -> dict[str, Any]:
    """Create a job for ``question`` and run it right here; returns the finished job.

    With ``dataset_id`` the job is its owner's and asks that dataset's current version
    (its file under ``SUNRISE_DATA_DIR``); raises NotFound for an unknown dataset and
    Conflict for one with no ready version. Otherwise the job is the ``local`` tenant's
    and asks the built-in dataset (or that tenant's default)."""
    upgrade(settings.database_url)
    ensure_sample_db(settings)
    with session_scope(settings.database_url) as s:
        tenant_id = (dataset_owner(s, dataset_id) if dataset_id is not None
                     else get_or_create_tenant(s, LOCAL_TENANT).id)
        dataset_id, version = pin_dataset(s, tenant_id, dataset_id)
        conversation = s.get(Conversation, conversation_id) if conversation_id else None
        job_id = create_job(s, tenant_id=tenant_id, conversation_id=conversation and conversation.id,
                            message=question, model=settings.model, dataset_id=dataset_id,
                            dataset_version=version)["id"]
    (runner or JobRunner(settings, events=events)).run(job_id)
    with session_scope(settings.database_url) as s:
        return job_to_dict(s.get(Job, job_id))


def dataset_owner(s: Session, dataset_id: str) -> int:
    """The id of the tenant owning ``dataset_id`` (this process is trusted: it has the
    app database); raises NotFound for an unknown or deleted dataset."""
    owner = s.scalar(select(Dataset.tenant_id).where(Dataset.id == dataset_id,
                                                     Dataset.deleted_at.is_(None)))
    if owner is None:
        raise NotFound(f"No dataset {dataset_id}.")
    return owner
