"""Auth and tenancy: keys hashed at rest, every read scoped to the caller's tenant (another
tenant's ids answer 404, exactly like unknown ones), per-tenant rate limit and concurrency
cap as 429 problem+json with Retry-After, and Idempotency-Key on jobs and batches.
"""
from __future__ import annotations

import hashlib
import time
import uuid

import pytest
from sqlalchemy import select, update

from shared.db import session_scope
from shared.keys import create_key, tenant_for_key
from shared.models import ApiKey, Job, LlmCall, new_id, utcnow


def _problem(resp, status: int) -> dict:
    assert resp.status_code == status, resp.get_data(as_text=True)
    assert resp.mimetype == "application/problem+json"
    return resp.get_json()


def _new_key(settings, prefix: str = "tenant") -> str:
    with session_scope(settings.database_url) as s:
        return create_key(s, f"{prefix}-{uuid.uuid4().hex[:10]}")


def _bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _tenant_id(settings, key: str) -> int:
    with session_scope(settings.database_url) as s:
        return tenant_for_key(s, key).id


@pytest.fixture
def other(settings) -> dict[str, str]:
    """The credentials of a second, unrelated tenant."""
    return _bearer(_new_key(settings, "intruder"))


def test_keys_are_stored_only_as_a_hash_and_revoked_keys_stop_working(settings):
    from api import create_app

    # key_cache_s=0: every request reads the key (the cached case is the test below).
    client = create_app(settings=settings.model_copy(update={"key_cache_s": 0})).test_client()
    key = _new_key(settings)
    with session_scope(settings.database_url) as s:
        row = s.scalar(select(ApiKey).where(ApiKey.key_hash == hashlib.sha256(key.encode())
                                            .hexdigest()))
        assert row is not None
        assert key not in (row.key_hash, row.prefix) and len(row.prefix) < len(key) // 2
    assert client.get(f"/v1/jobs/{uuid.uuid4()}", headers=_bearer(key)).status_code == 404
    almost = key[:-1] + ("A" if key[-1] != "A" else "B")
    _problem(client.get(f"/v1/jobs/{uuid.uuid4()}", headers=_bearer(almost)), 401)
    with session_scope(settings.database_url) as s:
        s.execute(update(ApiKey).where(ApiKey.id == row.id).values(revoked_at=utcnow()))
    _problem(client.get(f"/v1/jobs/{uuid.uuid4()}", headers=_bearer(key)), 401)


def test_a_revoked_key_works_at_most_key_cache_s_more(settings):
    from api import create_app

    ttl = 2.0
    client = create_app(settings=settings.model_copy(update={"key_cache_s": ttl})).test_client()
    key = _new_key(settings)
    wrong = key[:-1] + ("A" if key[-1] != "A" else "B")
    for _ in range(2):  # an unknown key is never remembered as anything
        _problem(client.get(f"/v1/jobs/{uuid.uuid4()}", headers=_bearer(wrong)), 401)
    checked = time.monotonic()
    assert client.get(f"/v1/jobs/{uuid.uuid4()}", headers=_bearer(key)).status_code == 404
    with session_scope(settings.database_url) as s:
        s.execute(update(ApiKey).where(ApiKey.key_hash == hashlib.sha256(key.encode())
                                       .hexdigest()).values(revoked_at=utcnow()))
    revoked = time.monotonic()
    status = client.get(f"/v1/jobs/{uuid.uuid4()}", headers=_bearer(key)).status_code
    if time.monotonic() - checked < ttl:
        assert status == 404, "remembered: still accepted within key_cache_s"
    while status != 401:
        assert time.monotonic() - revoked < ttl + 1.0, "a revoked key outlived key_cache_s"
        time.sleep(0.1)
        status = client.get(f"/v1/jobs/{uuid.uuid4()}", headers=_bearer(key)).status_code


def test_another_tenants_job_and_its_events_answer_404(client, auth, other):
    job_id = client.post("/v1/jobs", json={"message": "mine"}, headers=auth).get_json()["job_id"]
    unknown = str(uuid.uuid4())
    for path in (f"/v1/jobs/{job_id}", f"/v1/jobs/{job_id}?wait=1", f"/v1/jobs/{job_id}/events"):
        foreign = _problem(client.get(path, headers=other), 404)
        missing = _problem(client.get(path.replace(job_id, unknown), headers=other), 404)
        assert foreign["title"] == missing["title"], "foreign and unknown look alike"
    token = other["Authorization"].split()[1]
    _problem(client.get(f"/v1/jobs/{job_id}/events?access_token={token}"), 404)
    _problem(client.post(f"/v1/jobs/{job_id}/cancel", headers=other), 404)
    assert client.get(f"/v1/jobs/{job_id}", headers=auth).status_code == 200


def test_another_tenants_conversation_answers_404_and_cannot_be_continued(client, auth, other):
    mine = client.post("/v1/jobs", json={"message": "mine"}, headers=auth).get_json()
    conversation_id = mine["conversation_id"]
    _problem(client.get(f"/v1/conversations/{conversation_id}", headers=other), 404)
    _problem(client.delete(f"/v1/conversations/{conversation_id}", headers=other), 404)
    _problem(client.post("/v1/jobs", json={"message": "sneak in", "conversation_id":
                                           conversation_id}, headers=other), 404)
    listed = client.get("/v1/conversations", headers=other).get_json()["items"]
    assert conversation_id not in {c["conversation_id"] for c in listed}
    assert client.get(f"/v1/conversations/{conversation_id}", headers=auth).status_code == 200


def test_another_tenants_batch_answers_404(client, auth, other):
    batch = client.post("/v1/batches", json={"questions": ["How many flights?"]}, headers=auth)
    assert batch.status_code == 202, batch.get_data(as_text=True)
    batch_id = batch.get_json()["batch_id"]
    for path in (f"/v1/batches/{batch_id}", f"/v1/batches/{batch_id}/events",
                 f"/v1/batches/{batch_id}/report?format=json"):
        _problem(client.get(path, headers=other), 404)
    assert client.get(f"/v1/batches/{batch_id}", headers=auth).status_code == 200


def test_usage_counts_only_the_callers_own_calls(settings, client, auth, tenant_key, other):
    owner = _tenant_id(settings, tenant_key)
    with session_scope(settings.database_url) as s:
        s.add(LlmCall(job_id=new_id(), tenant_id=owner, attempt=1, round=0, model="m",
                      input_tokens=1234, output_tokens=56))
    mine = client.get("/v1/usage?group_by=tenant", headers=auth).get_json()
    theirs = client.get("/v1/usage?group_by=tenant", headers=other).get_json()
    assert mine["totals"]["input_tokens"] >= 1234
    assert theirs["totals"]["input_tokens"] == 0 and theirs["totals"]["llm_calls"] == 0
    assert len(mine["items"]) == 1, "group_by=tenant shows the caller alone"


def test_rate_limit_is_per_tenant_and_answers_429_with_retry_after(settings, tenant_key):
    from api import create_app

    client = create_app(settings=settings.model_copy(update={"rate_limit_per_minute": 2})) \
        .test_client()
    statuses = [client.post("/v1/jobs", json={"message": f"q{i}"}, headers=_bearer(tenant_key))
                for i in range(8)]
    limited = [r for r in statuses if r.status_code == 429]
    # A minute boundary may reset the window once; the limit still bites within 8 calls.
    assert limited and statuses.index(limited[0]) >= 2
    body = _problem(limited[0], 429)
    assert "rate limit" in body["detail"].lower()
    assert 1 <= int(limited[0].headers["Retry-After"]) <= 60
    fresh = _bearer(_new_key(settings))
    assert client.post("/v1/jobs", json={"message": "q"}, headers=fresh).status_code == 202


def test_concurrency_cap_answers_429_with_retry_after(settings, tenant_key):
    from api import create_app

    client = create_app(settings=settings.model_copy(update={"max_concurrent_jobs": 2})) \
        .test_client()
    tenant_id = _tenant_id(settings, tenant_key)
    busy = [new_id(), new_id()]
    with session_scope(settings.database_url) as s:  # two jobs of this tenant in flight
        for job_id in busy:
            s.add(Job(id=job_id, tenant_id=tenant_id, conversation_id=new_id(), message="busy",
                      model=settings.model, status="running", heartbeat_at=utcnow()))
    try:
        resp = client.post("/v1/jobs", json={"message": "one more"}, headers=_bearer(tenant_key))
        body = _problem(resp, 429)
        assert "limit 2" in body["detail"]
        assert int(resp.headers["Retry-After"]) >= 1
    finally:
        with session_scope(settings.database_url) as s:
            s.execute(update(Job).where(Job.id.in_(busy)).values(
                status="cancelled", error_code="cancelled", finished_at=utcnow()))
    assert client.post("/v1/jobs", json={"message": "now"}, headers=_bearer(tenant_key)) \
        .status_code == 202


def test_idempotency_keys_on_jobs_are_per_tenant(client, auth, other):
    key = uuid.uuid4().hex
    first = client.post("/v1/jobs", json={"message": "one"}, headers={"Idempotency-Key": key,
                                                                       **auth})
    again = client.post("/v1/jobs", json={"message": "one"}, headers={"Idempotency-Key": key,
                                                                       **auth})
    assert first.status_code == again.status_code == 202
    assert again.get_json()["job_id"] == first.get_json()["job_id"]
    _problem(client.post("/v1/jobs", json={"message": "two"},
                         headers={"Idempotency-Key": key, **auth}), 409)
    theirs = client.post("/v1/jobs", json={"message": "one"}, headers={"Idempotency-Key": key,
                                                                        **other})
    assert theirs.status_code == 202
    assert theirs.get_json()["job_id"] != first.get_json()["job_id"]


def test_idempotency_keys_on_batches(client, auth):
    key = {"Idempotency-Key": uuid.uuid4().hex, **auth}
    body = {"questions": ["How many flights?", "How many carriers?"], "title": "t"}
    first = client.post("/v1/batches", json=body, headers=key)
    again = client.post("/v1/batches", json=body, headers=key)
    assert first.status_code == 202 and again.status_code in (200, 202)
    assert again.get_json()["batch_id"] == first.get_json()["batch_id"]
    assert again.get_json()["job_ids"] == first.get_json()["job_ids"]
    _problem(client.post("/v1/batches", json={**body, "title": "other"}, headers=key), 409)


@pytest.mark.parametrize("path,body", [
    ("/v1/jobs", {"message": "How many flights?"}),
    ("/v1/batches", {"questions": ["How many flights?"]}),
])
def test_idempotency_keys_are_exact_tokens(client, auth, path, body):
    # Case and trailing spaces make a different key: each one is its own request.
    base = f"kX-{uuid.uuid4().hex[:8]}"
    ids = set()
    for key in (base, base.upper(), base.lower(), f"{base} "):
        resp = client.post(path, json=body, headers={"Idempotency-Key": key, **auth})
        assert resp.status_code == 202, (key, resp.get_data(as_text=True))
        ids.add(resp.get_json().get("job_id") or resp.get_json()["batch_id"])
    assert len(ids) == 4


def test_tenant_names_are_exact_tokens(settings):
    name = f"Acme-{uuid.uuid4().hex[:8]}"
    with session_scope(settings.database_url) as s:
        first, second = create_key(s, name), create_key(s, name.lower())
    assert _tenant_id(settings, first) != _tenant_id(settings, second)


def test_ids_are_exact_tokens_too(client, auth):
    job_id = client.post("/v1/jobs", json={"message": "mine"}, headers=auth).get_json()["job_id"]
    assert client.get(f"/v1/jobs/{job_id}", headers=auth).status_code == 200
    for variant in (job_id.upper(), f"{job_id} "):
        _problem(client.get(f"/v1/jobs/{variant}", headers=auth), 404)
        _problem(client.get(f"/v1/jobs/{variant}/events", headers=auth), 404)


@pytest.mark.parametrize("method,path", [
    ("POST", "/v1/jobs"),
    ("GET", "/v1/jobs/{job}"),
    ("POST", "/v1/jobs/{job}/cancel"),
    ("GET", "/v1/conversations"),
    ("DELETE", "/v1/conversations/{conversation}"),
    ("POST", "/v1/batches"),
    ("GET", "/v1/usage"),
])
def test_a_key_in_the_url_is_refused_outside_event_streams_and_reports(client, auth,
                                                                       tenant_key, method,
                                                                       path):
    job = client.post("/v1/jobs", json={"message": "mine"}, headers=auth).get_json()
    url = path.format(job=job["job_id"], conversation=job["conversation_id"])
    resp = client.open(url, method=method, query_string={"access_token": tenant_key},
                       json={"message": "How many flights?"} if method == "POST" else None)
    body = _problem(resp, 401)
    assert "access_token" in body["detail"]
    # ...and nothing happened: the job is still there, not cancelled.
    after = client.get(f"/v1/jobs/{job['job_id']}", headers=auth).get_json()
    assert after["status"] != "cancelled"


def test_a_key_in_the_url_opens_event_streams_and_reports(client, auth, tenant_key):
    job = client.post("/v1/jobs", json={"message": "mine"}, headers=auth).get_json()
    batch = client.post("/v1/batches", json={"questions": ["How many flights?"]},
                        headers=auth).get_json()
    token = {"access_token": tenant_key}
    stream = client.get(f"/v1/jobs/{job['job_id']}/events", query_string=token)
    assert stream.status_code == 200 and stream.mimetype == "text/event-stream"
    stream.close()
    report = client.get(f"/v1/batches/{batch['batch_id']}/report", query_string=token)
    assert report.status_code in (200, 409), report.get_data(as_text=True)
    batch_stream = client.get(f"/v1/batches/{batch['batch_id']}/events", query_string=token)
    assert batch_stream.status_code == 200
    batch_stream.close()


def _clear_of_a_minute_boundary() -> None:
    # The limits count per UTC minute: start well inside one, so none resets mid-test.
    import time

    if time.time() % 60 > 55:
        time.sleep(61 - time.time() % 60)


def test_reads_count_against_the_request_rate_too(settings, tenant_key):
    from api import create_app

    client = create_app(settings=settings.model_copy(update={"rate_limit_per_minute": 3})) \
        .test_client()
    _clear_of_a_minute_boundary()
    statuses = [client.get("/v1/conversations", headers=_bearer(tenant_key)).status_code
                for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    limited = client.get(f"/v1/jobs/{uuid.uuid4()}", headers=_bearer(tenant_key))
    assert 1 <= int(_problem(limited, 429) and limited.headers["Retry-After"]) <= 60


def test_a_batch_of_n_questions_costs_n_question_units(settings, tenant_key):
    from api import create_app

    client = create_app(settings=settings.model_copy(
        update={"question_limit_per_minute": 5})).test_client()
    auth = _bearer(tenant_key)

    def batch(n: int):
        return client.post("/v1/batches", json={"questions": [f"q{i}?" for i in range(n)]},
                           headers=auth)

    _clear_of_a_minute_boundary()
    assert batch(3).status_code == 202                          # 3 of 5
    refused = _problem(batch(3), 429)                            # 6 > 5: refused, not counted
    assert "question" in refused["detail"].lower()
    assert client.post("/v1/jobs", json={"message": "one more?"},
                       headers=auth).status_code == 202          # 4 of 5
    assert client.post("/v1/jobs", json={"message": "and one?"},
                       headers=auth).status_code == 202          # 5 of 5
    _problem(client.post("/v1/jobs", json={"message": "too many?"}, headers=auth), 429)
    # A batch larger than the whole budget is taken from a tenant idle this minute.
    idle = _bearer(_new_key(settings))
    assert client.post("/v1/batches", json={"questions": [f"q{i}?" for i in range(8)]},
                       headers=idle).status_code == 202


def test_a_zero_question_budget_refuses_every_question_but_not_reads(settings):
    from api import create_app

    client = create_app(settings=settings.model_copy(
        update={"question_limit_per_minute": 0})).test_client()
    auth = _bearer(_new_key(settings))  # idle this minute: the big-batch exception is moot
    _clear_of_a_minute_boundary()
    _problem(client.post("/v1/jobs", json={"message": "first question?"}, headers=auth), 429)
    _problem(client.post("/v1/batches", json={"questions": ["q?"]}, headers=auth), 429)
    assert client.get("/v1/conversations", headers=auth).status_code == 200
