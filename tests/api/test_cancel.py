"""POST /v1/jobs/{id}/cancel in each state, against the real API (gunicorn), a real
Celery worker, Redis and MariaDB: queued ends at once, running ends at the loop's next
round boundary with its partial usage recorded, terminal is 409."""
from __future__ import annotations

import pytest
from sqlalchemy import func, select

from shared.db import session_scope
from shared.models import Job, LlmCall
from shared.redis_client import redis_for
from sunrise.client import ApiError
from tests.utils.held_jobs import HeldJobs
from tests.utils.waiting import wait_until

pytestmark = pytest.mark.usefixtures("celery_worker")


@pytest.fixture
def held(settings, tenant_key, celery_app):
    with HeldJobs(settings, tenant_key, celery_app) as jobs:
        yield jobs


def test_a_queued_job_is_cancelled_at_once_and_never_runs(live_api, tenant_key, held, settings,
                                                          fake_llm):
    job = held.hold("Count the flights [never-runs]")
    with live_api.client(tenant_key) as client:
        cancelled = client.cancel(job["job_id"])
        assert cancelled["status"] == "cancelled" and cancelled["cancel_requested"] is True
        assert cancelled["error"]["code"] == "cancelled" and cancelled["finished_at"]
        assert client.get(job["job_id"]) == {k: v for k, v in cancelled.items()
                                             if k != "cancel_requested"}
        assert [e.event for e in client.stream(job["job_id"])] == ["queued", "cancelled"]
        # The message that was already on its way to the broker finds nothing to run.
        held.release(job["job_id"])
        broker = redis_for(settings.redis_url)
        wait_until(lambda: broker.llen("chat") == 0 and not broker.hlen("unacked"))
        assert client.get(job["job_id"])["status"] == "cancelled"
        # Its conversation is free for the next question.
        client.submit("And now?", conversation_id=job["conversation_id"])
    assert not any("[never-runs]" in str(body) for body in fake_llm.message_requests())


def test_a_running_job_stops_at_the_next_round_boundary_with_its_usage(live_api, tenant_key,
                                                                       settings, fake_llm):
    rounds = [{"tool_calls": [{"sql": f"SELECT {n} AS n"}]} for n in range(6)]
    marker = fake_llm.scenario("long-job", [*rounds, {"text": '{"answerText": "done"}'}])
    fake_llm.latency(700)  # each round takes a while: the cancel lands mid-job
    with live_api.client(tenant_key) as client:
        job_id = client.submit(f"{marker} take your time")["job_id"]
        events = client.stream(job_id, timeout=60)
        seen = []
        for event in events:
            seen.append(event)
            if event.event == "tool_call":
                break
        flagged = client.cancel(job_id)
        assert flagged["status"] == "running" and flagged["cancel_requested"] is True
        seen += list(events)
        final = client.get(job_id)
    assert seen[-1].event == "cancelled" and seen[-1].data == final
    assert final["status"] == "cancelled" and final["error"]["code"] == "cancelled"
    assert final["result"] is None
    calls = [e for e in seen if e.event == "llm_call"]
    usage = final["usage"]
    assert 1 <= usage["tool_rounds"] < 6, "stopped at a boundary, before the script ran out"
    with session_scope(settings.database_url) as s:
        recorded = s.execute(select(func.count(), func.sum(LlmCall.context_tokens),
                                    func.sum(LlmCall.output_tokens))
                             .where(LlmCall.job_id == job_id)).one()
        assert s.get(Job, job_id).cancel_requested
    assert recorded[0] == usage["tool_rounds"] == len(calls), "one call per finished round"
    assert usage["context_tokens"] == recorded[1] > 0, "the partial usage is the job's"
    assert usage["output_tokens"] == recorded[2] > 0
    assert len([b for b in fake_llm.message_requests() if marker in str(b)]) == recorded[0] < 7


def test_an_ended_job_cannot_be_cancelled(live_api, tenant_key, held, fake_llm):
    with live_api.client(tenant_key) as client:
        done = client.ask("How many flights are there?")
        cancelled = client.cancel(held.hold()["job_id"])
        for job_id, status in ((done["job_id"], "succeeded"), (cancelled["job_id"], "cancelled")):
            with pytest.raises(ApiError) as caught:
                client.cancel(job_id)
            assert caught.value.status == 409
            assert caught.value.problem["status_now"] == status
            assert client.get(job_id)["status"] == status
