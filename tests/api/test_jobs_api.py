"""The job endpoints' contract: validation, auth, tenancy, idempotency (real MariaDB)."""
from __future__ import annotations

import uuid

from sqlalchemy import func, select, text

from shared.db import session_scope
from shared.models import Job, iso


def _count_jobs(settings) -> int:
    with session_scope(settings.database_url) as s:
        return s.scalar(select(func.count()).select_from(Job))


def _problem(resp, status: int) -> dict:
    assert resp.status_code == status, resp.get_data(as_text=True)
    assert resp.mimetype == "application/problem+json"
    body = resp.get_json()
    assert body["status"] == status and body["detail"]
    return body


def test_submit_returns_202_and_persists_a_queued_job(client, auth, settings):
    resp = client.post("/v1/jobs", json={"message": "How many flights?"}, headers=auth)
    assert resp.status_code == 202
    body = resp.get_json()
    assert body["status"] == "queued"
    assert set(body["links"]) == {"self", "events", "cancel"}
    with session_scope(settings.database_url) as s:
        job = s.get(Job, body["job_id"])
        assert job.status in ("queued", "running", "succeeded")
        assert job.conversation_id == body["conversation_id"]


def test_a_submit_writes_its_rows_and_announces_the_job_as_it_is_stored(client, auth,
                                                                     settings):
    from shared.events import EventLog
    from shared.redis_client import redis_for

    resp = client.post("/v1/jobs", json={"message": "  How many flights?  "}, headers=auth)
    assert resp.status_code == 202, resp.get_data(as_text=True)
    job_id, conversation_id = resp.get_json()["job_id"], resp.get_json()["conversation_id"]
    with session_scope(settings.database_url) as s:
        row = s.execute(text(
            "SELECT j.enqueued_at, j.created_at, j.request_hash, j.charts IS NULL AS no_charts, "
            "j.numbers IS NULL AS no_numbers, j.idempotency_key, c.title, "
            "c.created_at AS c_created, c.updated_at AS c_updated, m.role, m.text, "
            "m.charts IS NULL AS m_no_charts FROM jobs j JOIN conversations c "
            "ON c.id = j.conversation_id JOIN messages m ON m.job_id = j.id "
            "WHERE j.id = :id"), {"id": job_id}).one()
        job = s.get(Job, job_id)
    assert row.enqueued_at is not None and row.request_hash and row.idempotency_key is None
    assert row.no_charts and row.no_numbers and row.m_no_charts, "unset JSON is SQL NULL"
    assert (row.title, row.role, row.text) == ("How many flights?", "user",
                                               "  How many flights?  ")
    assert row.c_created <= row.c_updated
    queued = next(e for e in EventLog(redis_for(settings.redis_url)).read(job_id)
                  if e.event == "queued")
    zeros = dict.fromkeys(queued.data["usage"], 0)
    assert queued.data == {
        "job_id": job_id, "conversation_id": conversation_id, "batch_id": None,
        "dataset_id": None, "dataset_version": None, "status": "queued",
        "message": "  How many flights?  ", "model": settings.model, "attempt": 0,
        "result": None, "usage": {**zeros, "cost_usd": 0.0}, "error": None,
        "created_at": iso(job.created_at), "started_at": None, "finished_at": None,
        "data_as_of": None,
        "links": {"self": f"/v1/jobs/{job_id}", "events": f"/v1/jobs/{job_id}/events",
                  "cancel": f"/v1/jobs/{job_id}/cancel"}}


def test_with_auth_disabled_every_request_is_the_default_tenant(settings):
    from api import create_app
    from shared.keys import get_or_create_tenant

    client = create_app(settings=settings.model_copy(update={"auth": "disabled"})).test_client()
    first = client.post("/v1/jobs", json={"message": "Anyone?"})
    second = client.post("/v1/jobs", json={"message": "Anyone else?"})
    assert first.status_code == second.status_code == 202, first.get_data(as_text=True)
    with session_scope(settings.database_url) as s:
        default = get_or_create_tenant(s, "default").id
        owners = {s.get(Job, r.get_json()["job_id"]).tenant_id for r in (first, second)}
    assert owners == {default}


def test_missing_and_wrong_keys_are_401(client, settings):
    before = _count_jobs(settings)
    _problem(client.post("/v1/jobs", json={"message": "hi"}), 401)
    _problem(client.post("/v1/jobs", json={"message": "hi"},
                         headers={"Authorization": "Bearer sk-sunrise-nope"}), 401)
    assert _count_jobs(settings) == before


def test_bad_bodies_are_rejected_and_change_nothing(client, auth, settings):
    before = _count_jobs(settings)
    _problem(client.post("/v1/jobs", data="{not json", headers=auth,
                         content_type="application/json"), 400)
    _problem(client.post("/v1/jobs", json={"message": ""}, headers=auth), 422)
    _problem(client.post("/v1/jobs", json={"message": "   "}, headers=auth), 422)
    _problem(client.post("/v1/jobs", json={"message": "x" * 8001}, headers=auth), 422)
    _problem(client.post("/v1/jobs", json={"message": "hi", "extra": 1}, headers=auth), 422)
    _problem(client.post("/v1/jobs", json=["message"], headers=auth), 400)
    assert _count_jobs(settings) == before


def test_unknown_and_foreign_jobs_are_404(client, auth, settings):
    from shared.keys import create_key

    _problem(client.get(f"/v1/jobs/{uuid.uuid4()}", headers=auth), 404)
    job_id = client.post("/v1/jobs", json={"message": "mine"}, headers=auth).get_json()["job_id"]
    with session_scope(settings.database_url) as s:
        other = {"Authorization": f"Bearer {create_key(s, f'other-{uuid.uuid4().hex[:8]}')}"}
    _problem(client.get(f"/v1/jobs/{job_id}", headers=other), 404)
    _problem(client.post(f"/v1/jobs/{job_id}/cancel", headers=other), 404)
    _problem(client.get(f"/v1/jobs/{job_id}/events", headers=other), 404)
    assert client.get(f"/v1/jobs/{job_id}", headers=auth).status_code == 200


def test_idempotency_key_same_body_same_job_different_body_409(client, auth):
    key = {"Idempotency-Key": uuid.uuid4().hex, **auth}
    first = client.post("/v1/jobs", json={"message": "one"}, headers=key).get_json()
    again = client.post("/v1/jobs", json={"message": "one"}, headers=key).get_json()
    assert again["job_id"] == first["job_id"]
    _problem(client.post("/v1/jobs", json={"message": "two"}, headers=key), 409)


def test_a_key_taken_between_the_check_and_the_insert_answers_the_first_job(
        client, auth, settings, monkeypatch):
    """The race the unique index settles: the insert fails, the transaction (with the
    conversation it had inserted) is rolled back, and the first request's job answers."""
    from sqlalchemy import false

    from api.services import jobs as job_service
    from shared.models import Conversation

    key = {"Idempotency-Key": uuid.uuid4().hex, **auth}
    first = client.post("/v1/jobs", json={"message": "one"}, headers=key).get_json()
    with session_scope(settings.database_url) as s:
        conversations = s.scalar(select(func.count()).select_from(Conversation))
    # The check misses, as it does for a request racing the first one's commit.
    monkeypatch.setattr(job_service, "_EARLIER", job_service._EARLIER.where(false()))
    again = client.post("/v1/jobs", json={"message": "one"}, headers=key)
    assert again.status_code == 202, again.get_data(as_text=True)
    assert again.get_json()["job_id"] == first["job_id"]
    _problem(client.post("/v1/jobs", json={"message": "two"}, headers=key), 409)
    with session_scope(settings.database_url) as s:
        assert s.scalar(select(func.count()).select_from(Conversation)) == conversations


def test_openapi_describes_the_job_endpoints(client):
    spec = client.get("/openapi.json").get_json()
    assert spec["openapi"].startswith("3.2")
    post = spec["paths"]["/v1/jobs"]["post"]
    ref = post["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    body = spec["components"]["schemas"][ref.rsplit("/", 1)[1]]
    assert body["properties"]["message"]["maxLength"] == 8000
    assert "202" in post["responses"]


def test_openapi_describes_each_event_of_the_streams(client):
    spec = client.get("/openapi.json").get_json()
    schemas = spec["components"]["schemas"]
    for path, names in (("/v1/jobs/{job_id}/events",
                         {"queued", "started", "llm_call", "tool_call", "thinking",
                          "answer_delta", "succeeded", "failed", "cancelled"}),
                        ("/v1/batches/{batch_id}/events", {"queued", "progress", "completed"})):
        content = spec["paths"][path]["get"]["responses"]["200"]["content"]
        branches = content["text/event-stream"]["itemSchema"]["oneOf"]
        named = {b["properties"]["event"]["const"]: b for b in branches
                 if "const" in b["properties"]["event"]}
        assert set(named) == names
        for branch in named.values():
            data = branch["properties"]["data"]
            assert data["contentMediaType"] == "application/json"
            assert data["contentSchema"]["$ref"].rsplit("/", 1)[1] in schemas
        # Event names added later are allowed (clients ignore what they do not know).
        assert branches[-1]["properties"]["event"]["not"]["enum"] == list(named)


def test_health_and_readiness(client):
    assert client.get("/healthz").get_json()["status"] == "ok"
    ready = client.get("/readyz")
    assert ready.status_code == 200
    assert ready.get_json()["checks"] == {"database": "ok", "redis": "ok"}
