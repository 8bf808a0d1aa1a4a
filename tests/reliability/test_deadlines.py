"""A job never stays ``running`` forever: the loop enforces an overall deadline, a
round limit, the SQL timeout and the LLM timeout itself (the threads pool has no Celery
time limits). Each test scripts the offline model to push one limit and checks the job
ends with the matching code.
"""
from __future__ import annotations

import json

from shared.events import EventLog
from shared.redis_client import redis_for
from tests.utils.job_checks import terminal_events
from worker.jobs.runner import JobRunner

RUNAWAY = "SELECT count(*) FROM flights a, flights b, flights c"


def _run(settings, client, auth, message: str) -> dict:
    job_id = client.post("/v1/jobs", json={"message": message}, headers=auth).get_json()["job_id"]
    JobRunner(settings, events=EventLog(redis_for(settings.redis_url))).run(job_id)
    job = client.get(f"/v1/jobs/{job_id}", headers=auth).get_json()
    assert job["status"] != "running"
    assert terminal_events(settings, job_id) == [job["status"]]
    return job


def _queries(n: int) -> list[dict]:
    return [{"tool_calls": [{"sql": f"SELECT {i} AS n"}]} for i in range(n)]


def test_the_overall_deadline_ends_a_job_that_keeps_querying(settings, client, auth, fake_llm):
    marker = fake_llm.scenario("endless", _queries(20))
    fake_llm.latency(400)
    job = _run(settings.model_copy(update={"job_deadline_s": 1.5, "max_tool_rounds": 50}),
               client, auth, f"Keep digging {marker}")
    assert job["status"] == "failed"
    assert job["error"]["code"] == "deadline_exceeded"
    assert 1 <= job["usage"]["tool_rounds"] < 20
    assert job["usage"]["context_tokens"] > 0, "partial usage is still recorded"


def test_the_round_limit_ends_a_job_with_tool_round_limit(settings, client, auth, fake_llm):
    marker = fake_llm.scenario("rounds", _queries(5))
    job = _run(settings.model_copy(update={"max_tool_rounds": 2}), client, auth,
               f"Count everything {marker}")
    assert job["status"] == "failed"
    assert job["error"]["code"] == "tool_round_limit"
    assert job["usage"]["tool_rounds"] == 2


def test_a_runaway_query_is_cancelled_and_the_job_goes_on(settings, client, auth, fake_llm):
    answer = json.dumps({"answerText": "That query was too big.", "charts": []})
    marker = fake_llm.scenario("runaway", [{"tool_calls": [{"sql": RUNAWAY}]}, {"text": answer}])
    job = _run(settings.model_copy(update={"sql_timeout_s": 0.5}), client, auth,
               f"Cross everything {marker}")
    assert job["status"] == "succeeded", job["error"]
    sent = fake_llm.message_requests()[-1]["messages"][-1]["content"][0]
    assert sent["is_error"] is True
    assert "exceeded the 0.5 s limit" in str(sent["content"])


def test_a_hung_model_call_is_cut_at_the_job_deadline_not_the_llm_timeout(settings, client,
                                                                          auth, fake_llm):
    fake_llm.fault("hang", count=1, seconds=30)
    job = _run(settings.model_copy(update={"job_deadline_s": 1.0, "llm_timeout_s": 20.0,
                                           "llm_max_retries": 0}),
               client, auth, "How many flights did each carrier fly?")
    assert job["status"] == "failed"
    assert job["error"]["code"] == "llm_unavailable"
    # Bounded by the 1 s deadline, far below the 20 s per-call timeout.
    assert job["usage"]["wall_ms"] < 10_000
