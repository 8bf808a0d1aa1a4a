"""A deployment whose built-in dataset was never built (``sunrise sample-data`` not run):
the reaper still sweeps, and the worker says so once instead of failing every task."""
from __future__ import annotations

import datetime as dt
import logging
import shutil
from pathlib import Path

import pytest
from sqlalchemy import update

import worker.tasks  # noqa: F401 -- its module-level tasks join every app
from shared.celery_factory import CHAT_QUEUE, REAP, make_celery
from shared.db import session_scope
from shared.events import EventLog
from shared.models import Job, utcnow
from shared.redis_client import redis_for
from worker.jobs.runner import JobRunner


@pytest.fixture
def unbuilt(settings, tmp_path):
    """The settings with a built-in dataset path where no file is (yet)."""
    return settings.model_copy(update={"duckdb_path": str(tmp_path / "var" / "sample.duckdb")})


def _missing_warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.levelno == logging.WARNING and "does not exist" in r.getMessage()]


def test_the_reaper_sweeps_and_says_once_that_the_builtin_dataset_is_missing(
        unbuilt, client, auth, caplog):
    job_id = client.post("/v1/jobs", json={"message": "How many flights?"},
                         headers=auth).get_json()["job_id"]
    redis_for(unbuilt.redis_url).flushdb()  # as if Redis had been down at submit time
    with session_scope(unbuilt.database_url) as s:
        s.execute(update(Job).where(Job.id == job_id).values(
            enqueued_at=None, created_at=utcnow() - dt.timedelta(seconds=5)))
    app = make_celery(unbuilt)
    with caplog.at_level(logging.WARNING):
        for _ in range(3):  # what beat does, every reaper_interval_s
            assert app.tasks[REAP].apply(throw=True).successful()
    assert redis_for(unbuilt.redis_url).llen(CHAT_QUEUE) == 1, "the sweep did its work"
    (said,) = _missing_warnings(caplog)
    assert unbuilt.duckdb_path in said and "sunrise sample-data" in said


def test_a_job_on_the_missing_builtin_fails_and_the_next_one_after_it_is_built_answers(
        unbuilt, client, auth, sample_duckdb):
    runner = JobRunner(unbuilt, events=EventLog(redis_for(unbuilt.redis_url)))

    def ask() -> dict:
        job_id = client.post("/v1/jobs", json={"message": "How many flights did each "
                                               "carrier fly?"}, headers=auth).get_json()["job_id"]
        runner.run(job_id)
        return client.get(f"/v1/jobs/{job_id}", headers=auth).get_json()

    first = ask()
    assert first["status"] == "failed" and first["error"]["code"] == "dataset_not_found"
    assert "sunrise sample-data" in first["error"]["message"]
    assert unbuilt.duckdb_path not in first["error"]["message"], "no server path for tenants"
    target = Path(unbuilt.duckdb_path)  # now built, as `sunrise sample-data` would
    target.parent.mkdir(parents=True)
    shutil.copyfile(sample_duckdb, target)
    assert ask()["status"] == "succeeded"
