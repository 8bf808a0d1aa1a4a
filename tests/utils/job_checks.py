"""What "terminal exactly once" means, in the database and in the event stream:
assertions shared by the reliability tests."""
from __future__ import annotations

import redis
from sqlalchemy import func, select

from shared.db import session_scope
from shared.events import stream_key
from shared.job_state import TERMINAL
from shared.models import Job, LlmCall, Message
from shared.usage_figures import CALL_FIELDS


def jobs_by_status(settings, job_ids: list[str]) -> dict[str, str]:
    with session_scope(settings.database_url) as s:
        return dict(s.execute(select(Job.id, Job.status).where(Job.id.in_(job_ids))).all())


def all_in(settings, job_ids: list[str], statuses) -> bool:
    found = jobs_by_status(settings, job_ids)
    return len(found) == len(job_ids) and all(v in statuses for v in found.values())


def terminal_events(settings, job_id: str) -> list[str]:
    """Names of the terminal events in the job's Redis stream (read on a client of its
    own: the app's pooled client may be skipping a Redis it just saw fail)."""
    client = redis.Redis.from_url(settings.redis_url, decode_responses=True)
    entries = client.xrange(stream_key("job", job_id))
    return [fields["event"] for _, fields in entries if fields.get("event") in TERMINAL]


def assert_answered_once(settings, job_id: str) -> Job:
    """Succeeded, one user and one assistant message, usage equal to the winning
    attempt's LLM calls (never the sum over attempts), one terminal event."""
    with session_scope(settings.database_url) as s:
        job = s.get(Job, job_id)
        assert job.status == "succeeded", (job.status, job.error_code, job.error_message)
        roles = s.execute(select(Message.role, func.count()).where(Message.job_id == job_id)
                          .group_by(Message.role)).all()
        assert dict(roles) == {"user": 1, "assistant": 1}, roles
        calls = s.scalars(select(LlmCall).where(LlmCall.job_id == job_id,
                                                LlmCall.attempt == job.attempt)).all()
        assert calls, "the winning attempt's LLM calls are recorded"
        assert len({c.round for c in calls}) == len(calls), "one row per call"
        for name in CALL_FIELDS:
            assert getattr(job, name) == sum(getattr(c, name) for c in calls), name
        s.expunge(job)
    assert terminal_events(settings, job_id) == ["succeeded"]
    return job
