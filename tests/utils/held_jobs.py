"""Jobs that wait for the test: committed exactly as the API commits them, with their
``queued`` event published, but not handed to the broker until the test releases them.

This is how tests hold a job still (to connect subscribers, start long-polls, cancel
it while queued) without sleeping and without racing the real Celery worker::

    @pytest.fixture
    def held(settings, tenant_key, celery_app):
        with HeldJobs(settings, tenant_key, celery_app) as jobs:
            yield jobs

On exit, every job still queued is cancelled, so no later test (a reaper sweep, say)
finds a stray job.
"""
from __future__ import annotations

import datetime as dt
from typing import Self

from sqlalchemy import update

from shared.config import Settings
from shared.dataset_state import pin_dataset
from shared.db import session_factory, session_scope
from shared.enqueue import enqueue_jobs
from shared.events import EventLog
from shared.job_view import job_to_dict
from shared.keys import tenant_for_key
from shared.models import Conversation, Job, Message, new_id, utcnow
from shared.redis_client import redis_for


def event_log(settings: Settings) -> EventLog:
    return EventLog(redis_for(settings.redis_url), maxlen=settings.events_maxlen,
                    ttl_s=settings.events_ttl_s)


class HeldJobs:
    def __init__(self, settings: Settings, api_key: str, celery_app=None):
        self.settings = settings
        self.api_key = api_key
        self.celery_app = celery_app
        self.job_ids: list[str] = []

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.job_ids:
            with session_scope(self.settings.database_url) as s:
                s.execute(update(Job).where(Job.id.in_(self.job_ids), Job.status == "queued")
                          .values(status="cancelled", finished_at=utcnow(),
                                  error_code="cancelled"))

    def hold(self, message: str = "How many flights are there?", *,
             conversation_id: str | None = None, updated_at: dt.datetime | None = None,
             dataset_id: str | None = None) -> dict:
        """A queued job (in a new conversation unless one is given) of the key's tenant;
        returns its view. ``updated_at`` sets the conversation's last activity. The job
        pins its dataset as the API's does (``dataset_id``, else the tenant's default)."""
        with session_scope(self.settings.database_url) as s:
            tenant = tenant_for_key(s, self.api_key)
            if conversation_id is None:
                conversation = Conversation(id=new_id(), tenant_id=tenant.id, title=message[:200])
                s.add(conversation)
            else:
                conversation = s.get(Conversation, conversation_id)
            conversation.updated_at = updated_at or utcnow()
            pinned_id, pinned_version = pin_dataset(s, tenant.id, dataset_id)
            job = Job(id=new_id(), tenant_id=tenant.id, conversation_id=conversation.id,
                      message=message, model=self.settings.model, dataset_id=pinned_id,
                      dataset_version=pinned_version)
            s.add(job)
            s.add(Message(conversation_id=conversation.id, job_id=job.id, role="user",
                          text=message))
            s.flush()
            view = job_to_dict(job)
        self.job_ids.append(view["job_id"])
        event_log(self.settings).publish(view["job_id"], "queued", view)
        return view

    def release(self, job_id: str) -> None:
        """Hand the held job to the broker; a running ``celery_worker`` then runs it."""
        sessions = session_factory(self.settings.database_url)
        assert enqueue_jobs(self.celery_app, sessions, [job_id]) == 1

    def end_without_event(self, job_id: str, status: str = "failed") -> None:
        """End the job in the database only, as a worker that died between its commit and
        its publish leaves it: no terminal event reaches the stream."""
        with session_scope(self.settings.database_url) as s:
            s.execute(update(Job).where(Job.id == job_id).values(
                status=status, finished_at=utcnow(), error_code="worker_lost",
                error_message="The worker stopped responding."))
