"""Fault (a): a worker process is SIGKILLed with jobs in flight.

Real processes: a Celery worker and Celery beat (the reaper) as subprocesses, a private
redis-server, MariaDB, the offline model over HTTP. The killed worker's heartbeats go
stale, the reaper puts its jobs back in the queue, a second worker runs them, and each
ends terminal exactly once: one answer, usage of one attempt, one terminal event.
"""
from __future__ import annotations

import pytest

from tests.utils.job_checks import all_in, assert_answered_once, jobs_by_status
from tests.utils.waiting import wait_until

pytestmark = pytest.mark.fault

QUESTIONS = [
    "How many flights did each carrier fly?",
    "What is the average departure delay by origin?",
    "How many flights per month?",
    "Which destinations have the most flights?",
]


def test_jobs_of_a_killed_worker_finish_exactly_once_on_another(client, auth, settings,
                                                                  fake_llm, launcher):
    fake_llm.latency(1500)  # every model call takes 1.5 s: the jobs are surely in flight
    launcher.beat()
    first = launcher.worker("first")
    job_ids = [client.post("/v1/jobs", json={"message": q}, headers=auth).get_json()["job_id"]
               for q in QUESTIONS]

    wait_until(lambda: all_in(settings, job_ids, ("running",)), timeout=60, interval=0.1)
    first.kill()
    assert all_in(settings, job_ids, ("running",)), "killed mid-flight, nothing finished"

    launcher.worker("second")
    wait_until(lambda: all_in(settings, job_ids, ("succeeded", "failed", "cancelled")),
               timeout=90, interval=0.2)
    assert set(jobs_by_status(settings, job_ids).values()) == {"succeeded"}
    for job_id in job_ids:
        job = assert_answered_once(settings, job_id)
        assert job.attempt == 2, "the second attempt (on the second worker) won"
        view = client.get(f"/v1/jobs/{job_id}", headers=auth).get_json()
        assert view["status"] == "succeeded" and view["result"]["answer_text"]
