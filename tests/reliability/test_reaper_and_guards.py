"""The reaper and the job-row guards, one situation at a time (real MariaDB and Redis).

Each test puts a job row into the state a crash, an outage or a redelivery would leave
behind, then checks that the reaper or the guarded writes do the one right thing.
"""
from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import func, select, update

from shared.audit import record_job
from shared.celery_factory import CHAT_QUEUE, REPORTS_QUEUE, make_celery
from shared.db import session_scope
from shared.events import EventLog
from shared.job_view import job_to_dict
from shared.models import AuditEntry, Job, LlmCall, Message, ToolCall, User, utcnow
from shared.redis_client import redis_for
from tests.utils.job_checks import assert_answered_once, terminal_events
from worker.jobs.reaper import Reaper
from worker.jobs.runner import JobRunner
from worker.jobs.store import JobEnding, JobStore, UnwrittenTrace, call_row


@pytest.fixture
def reaper(settings):
    return Reaper(settings, make_celery(settings))


@pytest.fixture
def store(settings):
    from shared.db import session_factory

    return JobStore(session_factory(settings.database_url), stale_after_s=settings.stale_after_s)


def _submit(client, auth, message: str = "How many flights did each carrier fly?") -> str:
    return client.post("/v1/jobs", json={"message": message}, headers=auth).get_json()["job_id"]


def _set(settings, job_id: str, **values) -> None:
    with session_scope(settings.database_url) as s:
        s.execute(update(Job).where(Job.id == job_id).values(**values))


def _job(settings, job_id: str) -> Job:
    with session_scope(settings.database_url) as s:
        job = s.get(Job, job_id)
        s.expunge(job)
        return job


def _ago(seconds: float) -> dt.datetime:
    return utcnow() - dt.timedelta(seconds=seconds)


def _queued_messages(settings) -> int:
    return redis_for(settings.redis_url).llen(CHAT_QUEUE)


def test_a_dead_workers_job_goes_back_to_the_queue(settings, client, auth, reaper):
    job_id = _submit(client, auth)
    redis_for(settings.redis_url).flushdb()
    _set(settings, job_id, status="running", attempt=1, heartbeat_at=_ago(60))
    assert reaper.run_once()["stale"] == 1
    job = _job(settings, job_id)
    assert job.status == "queued" and job.enqueued_at is not None
    assert _queued_messages(settings) == 1


def test_after_max_attempts_the_job_fails_and_its_terminal_event_is_published(
        settings, client, auth, reaper):
    job_id = _submit(client, auth)
    _set(settings, job_id, status="running", attempt=settings.max_attempts,
         heartbeat_at=_ago(60))
    assert reaper.run_once()["failed"] == 1
    job = client.get(f"/v1/jobs/{job_id}", headers=auth).get_json()
    assert job["status"] == "failed" and job["error"]["code"] == "worker_lost"
    assert terminal_events(settings, job_id) == ["failed"]
    assert reaper.run_once()["failed"] == 0, "a second sweep changes nothing"
    assert terminal_events(settings, job_id) == ["failed"]


def test_a_job_the_reaper_fails_gets_its_audit_entry_as_every_ending_does(
        settings, client, auth, reaper):
    job_id = _submit(client, {**auth, "Sunrise-User": "reaped-user"}, "Which carrier won?")
    _set(settings, job_id, status="running", attempt=settings.max_attempts,
         heartbeat_at=_ago(60))
    with session_scope(settings.database_url) as s:  # what its last attempt had run
        s.add_all([ToolCall(job_id=job_id, attempt=settings.max_attempts - 1, round=0,
                            sql="SELECT 'an earlier attempt'"),
                   ToolCall(job_id=job_id, attempt=settings.max_attempts, round=0,
                            sql="SELECT carrier FROM flights")])
    assert reaper.run_once()["failed"] == 1
    assert reaper.run_once()["failed"] == 0

    with session_scope(settings.database_url) as s:
        job = s.get(Job, job_id)
        (entry,) = s.scalars(select(AuditEntry).where(AuditEntry.target == job_id)).all()
        user = s.scalar(select(User).where(User.tenant_id == job.tenant_id,
                                           User.external_id == "reaped-user"))
        # The shape a worker's own ending writes, for comparison.
        expected = {"action": "job", "tenant_id": job.tenant_id, "user_id": user.id,
                    "actor": f"user:{user.id}", "at": job.finished_at}
        with s.begin_nested() as nested:
            record_job(s.connection(), job, "failed", at=job.finished_at)
            (shape,) = s.scalars(select(AuditEntry.details).where(
                AuditEntry.target == job_id, AuditEntry.id != entry.id)).all()
            nested.rollback()
    assert {name: getattr(entry, name) for name in expected} == expected
    assert entry.details == shape
    assert entry.details["status"] == "failed"
    assert entry.details["question"] == "Which carrier won?"
    assert entry.details["sql"] == ["SELECT carrier FROM flights"]


def test_a_job_that_never_reached_the_broker_is_enqueued(settings, client, auth, reaper):
    job_id = _submit(client, auth)
    redis_for(settings.redis_url).flushdb()  # as if Redis had been down at submit time
    _set(settings, job_id, enqueued_at=None, created_at=_ago(5))
    assert reaper.run_once()["requeued"] == 1
    assert _job(settings, job_id).enqueued_at is not None
    assert _queued_messages(settings) == 1


def test_a_lost_message_is_resent_but_a_waiting_one_is_not_duplicated(settings, client, auth,
                                                                     reaper):
    job_id = _submit(client, auth)
    _set(settings, job_id, enqueued_at=_ago(60))
    assert _queued_messages(settings) == 1
    assert reaper.run_once()["requeued"] == 0, "its message is still in the queue"
    redis_for(settings.redis_url).flushdb()  # Redis restarted empty
    assert reaper.run_once()["requeued"] == 1
    assert _queued_messages(settings) == 1


def test_held_batch_jobs_do_not_make_a_waiting_message_look_lost(settings, client, auth,
                                                                  reaper):
    # A batch of three: the first question is released (its message waits in the
    # reports queue), the other two are held. Held jobs have no message by design, so
    # they must not count among the jobs the broker should hold messages for.
    batch = client.post("/v1/batches", json={"questions": [f"Q{i} how many flights?"
                                                           for i in range(3)]},
                        headers=auth).get_json()
    first = batch["job_ids"][0]
    _set(settings, first, enqueued_at=_ago(60))
    assert redis_for(settings.redis_url).llen(REPORTS_QUEUE) == 1
    assert reaper.run_once()["requeued"] == 0, "its message is still in the queue"
    assert redis_for(settings.redis_url).llen(REPORTS_QUEUE) == 1


def test_a_zombie_attempt_cannot_overwrite_the_attempt_that_replaced_it(settings, client, auth,
                                                                      reaper, store):
    job_id = _submit(client, auth)
    zombie = store.claim(job_id)
    _set(settings, job_id, heartbeat_at=_ago(60))  # its worker stopped beating...
    reaper.run_once()
    current = store.claim(job_id)  # ...and another worker took the job over
    assert (zombie.attempt, current.attempt) == (1, 2)
    answer = JobEnding("succeeded", answer_text="late", charts=[], parse_path="direct")
    assert store.finish(zombie, answer) is None, "the old attempt's result is discarded"
    row = store.finish(current, JobEnding("succeeded", answer_text="on time", charts=[],
                                       parse_path="direct"))
    assert row.answer_text == "on time"
    assert store.finish(zombie, answer) is None
    with session_scope(settings.database_url) as s:
        texts = s.scalars(select(Message.text).where(Message.job_id == job_id,
                                                     Message.role == "assistant")).all()
    assert texts == ["on time"]


def test_a_retried_final_write_that_had_landed_is_reported_not_lost(settings, client, auth,
                                                                    store):
    job_id = _submit(client, auth)
    job = store.claim(job_id)
    outcome = JobEnding("succeeded", answer_text="42", charts=[{"type": "bar"}],
                        parse_path="direct", numbers={"checked": 1})
    first = store.finish(job, outcome)
    again = store.finish(job, outcome)  # what a retry sees when the first ack was lost
    assert again is not None and again.id == first.id and again.status == "succeeded"
    assert job_to_dict(again) == job_to_dict(first), "the row read back is the row built"
    with session_scope(settings.database_url) as s:
        assert s.scalar(select(func.count()).select_from(Message).where(
            Message.job_id == job_id, Message.role == "assistant")) == 1


def test_a_retried_llm_call_record_is_stored_once(settings, client, auth, store):
    job = store.claim(_submit(client, auth))
    usage = {"input_tokens": 10, "output_tokens": 5}
    first = call_row(job, 0, usage, "end_turn", 12)
    store.record_round(job, UnwrittenTrace(calls=[first]))
    store.record_round(job, UnwrittenTrace(calls=[first]))  # its commit's reply was lost
    last = call_row(job, 1, usage, "end_turn", 12)
    ending = JobEnding("succeeded", answer_text="42", charts=[], parse_path="direct")
    store.finish(job, ending, UnwrittenTrace(calls=[last]))
    store.finish(job, ending, UnwrittenTrace(calls=[last]))  # the final write, retried
    with session_scope(settings.database_url) as s:
        rounds = s.scalars(select(LlmCall.round).where(LlmCall.job_id == job.id)).all()
    assert sorted(rounds) == [0, 1]


def test_a_redelivered_finished_job_changes_nothing(settings, client, auth, fake_llm):
    job_id = _submit(client, auth)
    runner = JobRunner(settings, events=EventLog(redis_for(settings.redis_url)))
    assert runner.run(job_id) == "succeeded"
    before = _job(settings, job_id)
    assert runner.run(job_id) is None, "a second delivery is refused by the claim"
    after = _job(settings, job_id)
    assert (after.attempt, after.input_tokens, after.finished_at) == \
        (before.attempt, before.input_tokens, before.finished_at)
    assert_answered_once(settings, job_id)
