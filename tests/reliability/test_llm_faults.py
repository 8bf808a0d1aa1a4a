"""Fault (d): the model answers 529/429 in bursts, or hangs.

The SDK's own retries (``llm_max_retries``, honouring ``retry-after``) absorb a short
burst; a longer one, or a model that hangs past ``llm_timeout_s`` on every attempt,
ends the job ``failed`` with code ``llm_unavailable`` after exactly
``llm_max_retries + 1`` attempts — never a job stuck ``running``.
"""
from __future__ import annotations

import pytest

from shared.events import EventLog
from shared.redis_client import redis_for
from tests.utils.job_checks import assert_answered_once, terminal_events
from tests.utils.waiting import wait_until
from worker.jobs.runner import JobRunner

pytestmark = pytest.mark.fault


def _run(settings, client, auth, message: str) -> dict:
    job_id = client.post("/v1/jobs", json={"message": message}, headers=auth).get_json()["job_id"]
    runner = JobRunner(settings, events=EventLog(redis_for(settings.redis_url)))
    runner.run(job_id)
    return client.get(f"/v1/jobs/{job_id}", headers=auth).get_json()


def _statuses(fake_llm) -> list[int]:
    return [entry["status"] for entry in fake_llm.message_entries()]


def test_a_short_overload_burst_is_retried_and_the_job_succeeds(settings, client, auth,
                                                                  fake_llm):
    fake_llm.fault("529", count=1, retry_after=0.05)
    fake_llm.fault("429", count=1, retry_after=0.05)
    job = _run(settings, client, auth, "How many flights did each carrier fly?")
    assert job["status"] == "succeeded", job["error"]
    assert _statuses(fake_llm)[:3] == [529, 429, 200]
    assert_answered_once(settings, job["job_id"])


def test_a_burst_longer_than_the_retries_fails_cleanly_with_llm_unavailable(settings, client,
                                                                            auth, fake_llm):
    fake_llm.fault("429", count=3, retry_after=0.05)
    job = _run(settings, client, auth, "How many flights did each carrier fly?")
    assert job["status"] == "failed"
    assert job["error"]["code"] == "llm_unavailable"
    assert "retries" in job["error"]["message"]
    assert _statuses(fake_llm) == [429] * (settings.llm_max_retries + 1)
    assert terminal_events(settings, job["job_id"]) == ["failed"]
    assert job["result"] is None


def test_a_hanging_model_is_timed_out_retried_then_failed(settings, client, auth, fake_llm):
    impatient = settings.model_copy(update={"llm_timeout_s": 1.0, "llm_max_retries": 1})
    fake_llm.fault("hang", count=2, seconds=30)
    job = _run(impatient, client, auth, "How many flights did each carrier fly?")
    assert job["status"] == "failed"
    assert job["error"]["code"] == "llm_unavailable"
    # The server logs a hung call once it notices the client left (within ~50 ms).
    entries = wait_until(lambda: len(fake_llm.message_entries()) == 2
                         and fake_llm.message_entries(), timeout=10)
    assert [e.get("faults") for e in entries] == [["hang"], ["hang"]]
    assert all(e["status"] == 499 for e in entries), "the client gave up, the server saw it"
