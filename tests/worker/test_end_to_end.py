"""A job submitted over HTTP is run by a real Celery worker and lands in MariaDB."""
from __future__ import annotations

from sqlalchemy import select

from shared.db import session_scope
from shared.models import Job, LlmCall, Message
from tests.utils.waiting import wait_for_status


def test_job_reaches_succeeded_with_its_rows_in_mariadb(client, auth, settings, celery_worker,
                                                       fake_llm):
    resp = client.post("/v1/jobs", json={"message": "How many flights did each carrier fly?"},
                       headers=auth)
    job_id = resp.get_json()["job_id"]
    job = wait_for_status(client, auth, job_id)
    assert job["status"] == "succeeded", job
    assert "{{chart:0}}" not in job["result"]["answer_text"] or job["result"]["charts"]
    assert job["result"]["charts"][0]["data"], "the chart carries real rows"
    with session_scope(settings.database_url) as s:
        row = s.get(Job, job_id)
        assert row.status == "succeeded" and row.attempt == 1
        assert row.tool_rounds >= 1 and row.sql_executed >= 1
        calls = s.scalars(select(LlmCall).where(LlmCall.job_id == job_id)).all()
        assert len(calls) >= 2
        assert row.input_tokens == sum(c.input_tokens for c in calls)
        answers = s.scalars(select(Message).where(Message.job_id == job_id,
                                                  Message.role == "assistant")).all()
        assert len(answers) == 1
