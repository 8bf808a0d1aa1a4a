"""The /v1/batches contract: validation, tenancy, idempotency, progress, SSE, webhooks."""
from __future__ import annotations

import itertools
import json
import uuid

from sqlalchemy import func, select, update

from shared import batch_rows
from shared.db import session_scope
from shared.keys import create_key, tenant_for_key
from shared.models import Batch, Job, utcnow
from tests.batches.conftest import chart_questions, wait_for_batch


def _problem(resp, status: int) -> dict:
    assert resp.status_code == status, resp.get_data(as_text=True)
    assert resp.mimetype == "application/problem+json"
    return resp.get_json()


def _count_batches(settings) -> int:
    with session_scope(settings.database_url) as s:
        return s.scalar(select(func.count()).select_from(Batch))


def _stuck_batch(settings, api_key: str, questions: list[str]) -> str:
    """A batch whose jobs all look sent to the broker but never reached it: nothing runs
    them (tests run no reaper) and a status read finds nothing to release."""
    with session_scope(settings.database_url) as s:
        tenant = tenant_for_key(s, api_key)
        batch_id = batch_rows.create_batch(s, tenant_id=tenant.id, questions=questions,
                                           model=settings.model).id
        s.execute(update(Job).where(Job.batch_id == batch_id).values(enqueued_at=utcnow()))
        return batch_id


def test_bad_batches_are_rejected_and_change_nothing(client, auth, settings):
    before = _count_batches(settings)
    _problem(client.post("/v1/batches", json={"questions": []}, headers=auth), 422)
    _problem(client.post("/v1/batches", json={"questions": ["ok", "  "]}, headers=auth), 422)
    _problem(client.post("/v1/batches", json={"questions": ["q"] * 501}, headers=auth), 422)
    _problem(client.post("/v1/batches", json={"questions": ["q"], "mode": "economy",
                                              "conversation": "shared"}, headers=auth), 422)
    _problem(client.post("/v1/batches", json={"questions": ["q"], "color": "red"},
                         headers=auth), 422)
    _problem(client.post("/v1/batches", json={"questions": ["q"],
                                              "webhook_url": "http://169.254.169.254/x"},
                         headers=auth), 422)
    _problem(client.post("/v1/batches", json={"questions": ["q"]}), 401)
    assert _count_batches(settings) == before


def test_foreign_and_unknown_batches_are_404(client, auth, tenant_key, settings):
    batch_id = _stuck_batch(settings, tenant_key, ["How many flights?"])
    with session_scope(settings.database_url) as s:
        other = {"Authorization": f"Bearer {create_key(s, f'other-{uuid.uuid4().hex[:8]}')}"}
    for path in ("", "/report", "/events"):
        _problem(client.get(f"/v1/batches/{batch_id}{path}", headers=other), 404)
        _problem(client.get(f"/v1/batches/{uuid.uuid4()}{path}", headers=auth), 404)
    assert client.get(f"/v1/batches/{batch_id}", headers=auth).status_code == 200


def test_running_batch_shows_counts_and_its_report_is_not_ready(client, auth, tenant_key,
                                                                 settings):
    batch_id = _stuck_batch(settings, tenant_key, chart_questions(3))
    view = client.get(f"/v1/batches/{batch_id}", headers=auth).get_json()
    assert view["status"] == "running" and view["total"] == 3
    assert view["counts"] == {"queued": 3, "running": 0, "succeeded": 0, "failed": 0,
                              "cancelled": 0}
    assert view["progress"] == 0 and view["eta_s"] is None and len(view["job_ids"]) == 3
    body = _problem(client.get(f"/v1/batches/{batch_id}/report?format=md", headers=auth), 409)
    assert "still running" in body["detail"]
    _problem(client.get(f"/v1/batches/{batch_id}/report?format=pdf", headers=auth), 422)


def test_idempotency_key_returns_the_first_batch(client, auth, settings):
    body = {"questions": ["How many flights per origin?"], "title": "once"}
    key = {"Idempotency-Key": f"batch-{uuid.uuid4()}", **auth}
    first = client.post("/v1/batches", json=body, headers=key)
    again = client.post("/v1/batches", json=body, headers=key)
    assert first.status_code == again.status_code == 202
    assert again.get_json() == first.get_json()
    _problem(client.post("/v1/batches", json={**body, "title": "twice"}, headers=key), 409)
    with session_scope(settings.database_url) as s:
        assert s.scalar(select(func.count()).select_from(Job).where(
            Job.batch_id == first.get_json()["batch_id"])) == 1


def test_progress_events_then_completed_over_sse(client, auth, celery_worker, fake_llm,
                                                 refusal):
    questions = [*chart_questions(2), f"{refusal} anything"]
    accepted = client.post("/v1/batches", json={"questions": questions}, headers=auth).get_json()
    view = wait_for_batch(client, auth, accepted["batch_id"], timeout=60)
    assert view["counts"]["succeeded"] == 2 and view["counts"]["failed"] == 1
    frames = client.get(f"/v1/batches/{accepted['batch_id']}/events",
                        headers=auth).get_data(as_text=True)
    events = [(block.split("event: ")[1].split("\n")[0],
               json.loads(block.split("data: ")[1].split("\n")[0]))
              for block in frames.split("\n\n") if "event: " in block]
    names = [name for name, _ in events]
    assert names[0] == "queued" and names[-1] == "completed"
    progress = [data for name, data in events if name == "progress"]
    assert sorted(p["index"] for p in progress) == [0, 1, 2]
    assert progress[-1]["done"] == 3 and progress[-1]["progress"] == 1.0
    assert events[-1][1]["status"] == "completed"
    last_id = [line for line in frames.splitlines() if line.startswith("id: ")][-1][4:]
    resumed = client.get(f"/v1/batches/{accepted['batch_id']}/events",
                         headers={**auth, "Last-Event-ID": last_id})
    assert resumed.status_code == 204


def test_shared_conversation_asks_in_order_with_earlier_answers(client, auth, settings,
                                                                celery_worker, fake_llm):
    questions = chart_questions(3)
    accepted = client.post("/v1/batches", json={"questions": questions,
                                                "conversation": "shared"},
                           headers=auth).get_json()
    view = wait_for_batch(client, auth, accepted["batch_id"], timeout=60)
    assert view["counts"]["succeeded"] == 3 and view["conversation"] == "shared"
    with session_scope(settings.database_url) as s:
        jobs = s.scalars(select(Job).where(Job.batch_id == accepted["batch_id"])
                         .order_by(Job.batch_index)).all()
        assert len({j.conversation_id for j in jobs}) == 1
        for earlier, later in itertools.pairwise(jobs):
            assert earlier.finished_at <= later.started_at, "one question at a time, in order"
    firsts = [body for body in fake_llm.message_requests()
              if body["messages"][-1]["role"] == "user"
              and isinstance(body["messages"][-1]["content"], list)
              and body["messages"][-1]["content"][0].get("type") == "text"
              and body["messages"][-1]["content"][0]["text"] == questions[2]]
    assert firsts and len(firsts[0]["messages"]) == 5, "two earlier turns, then the question"
