"""/v1/conversations and multi-turn jobs on real MariaDB, Redis and a real Celery worker:
newest-first pages, messages, deletion, history replayed to the model, and two racing
questions on one conversation (the second is refused with 409)."""
from __future__ import annotations

import datetime as dt
import threading
import uuid

import pytest

from shared.db import session_scope
from shared.keys import create_key
from sunrise.client import ApiError
from tests.utils.held_jobs import HeldJobs
from tests.utils.waiting import wait_for_status

pytestmark = pytest.mark.usefixtures("celery_worker")


@pytest.fixture
def held(settings, tenant_key, celery_app):
    with HeldJobs(settings, tenant_key, celery_app) as jobs:
        yield jobs


def other_tenant(settings) -> dict[str, str]:
    with session_scope(settings.database_url) as s:
        return {"Authorization": f"Bearer {create_key(s, f'other-{uuid.uuid4().hex[:8]}')}"}


def text_of(content) -> str:
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content)


def test_the_list_is_newest_first_and_pages_neither_repeat_nor_skip(client, auth, held):
    base = dt.datetime(2030, 1, 1, 12, 0, 0, 123456)
    stamps = [base, base + dt.timedelta(minutes=1), base + dt.timedelta(minutes=1),
              base + dt.timedelta(minutes=2), base + dt.timedelta(microseconds=1)]
    made = [(held.hold(f"question {i}", updated_at=t)["conversation_id"], t)
            for i, t in enumerate(stamps)]
    expected = [cid for cid, _ in sorted(made, key=lambda m: (m[1], m[0]), reverse=True)]
    seen, cursor, pages = [], None, 0
    while True:
        query = f"?limit=2&cursor={cursor}" if cursor else "?limit=2"
        page = client.get(f"/v1/conversations{query}", headers=auth).get_json()
        seen += [c["conversation_id"] for c in page["items"]]
        pages += 1
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == expected and pages == 3
    first = client.get("/v1/conversations", headers=auth).get_json()["items"][0]
    assert set(first) == {"conversation_id", "title", "created_at", "updated_at"}
    assert first["title"] == "question 3" and first["updated_at"] == "2030-01-01T12:02:00.123456Z"


@pytest.mark.parametrize("query, status", [
    ("?limit=0", 422), ("?limit=101", 422), ("?cursor=not-a-cursor", 400),
    ("?cursor=bm8tc2VwYXJhdG9y", 400), ("?sort=old", 422)])
def test_bad_list_queries_are_refused(client, auth, query, status):
    resp = client.get(f"/v1/conversations{query}", headers=auth)
    assert resp.status_code == status and resp.mimetype == "application/problem+json"


def test_another_tenant_sees_none_of_them(client, auth, settings, held):
    cid = held.hold()["conversation_id"]
    other = other_tenant(settings)
    assert client.get("/v1/conversations", headers=other).get_json()["items"] == []
    assert client.get(f"/v1/conversations/{cid}", headers=other).status_code == 404
    assert client.delete(f"/v1/conversations/{cid}", headers=other).status_code == 404
    assert client.post("/v1/jobs", json={"message": "hi", "conversation_id": cid},
                       headers=other).status_code == 404
    assert client.get(f"/v1/conversations/{cid}", headers=auth).status_code == 200


def test_a_second_turn_sees_the_first_answer_and_both_are_in_the_history(client, auth,
                                                                         fake_llm):
    first_q, second_q = "How many flights did each carrier fly?", "How many airports are there?"
    first = client.post("/v1/jobs", json={"message": first_q}, headers=auth).get_json()
    first_job = wait_for_status(client, auth, first["job_id"])
    cid = first["conversation_id"]
    second = client.post("/v1/jobs", json={"message": second_q, "conversation_id": cid},
                         headers=auth).get_json()
    assert second["conversation_id"] == cid
    second_job = wait_for_status(client, auth, second["job_id"])
    assert first_job["status"] == second_job["status"] == "succeeded"

    request = next(b for b in fake_llm.message_requests()
                   if text_of(b["messages"][-1]["content"]) == second_q)
    history = [(m["role"], text_of(m["content"])) for m in request["messages"]]
    assert history == [("user", first_q), ("assistant", first_job["result"]["answer_text"]),
                       ("user", second_q)], "prior turns are role + final text, no tool trace"

    convo = client.get(f"/v1/conversations/{cid}", headers=auth).get_json()
    assert [(m["role"], m["text"], m["job_id"]) for m in convo["messages"]] == [
        ("user", first_q, first["job_id"]),
        ("assistant", first_job["result"]["answer_text"], first["job_id"]),
        ("user", second_q, second["job_id"]),
        ("assistant", second_job["result"]["answer_text"], second["job_id"])]
    assert convo["messages"][1]["charts"] == first_job["result"]["charts"]
    assert convo["messages"][0]["charts"] is None
    assert all(m["created_at"].endswith("Z") for m in convo["messages"])
    assert client.get("/v1/conversations", headers=auth).get_json()["items"][0][
        "conversation_id"] == cid


def test_two_questions_racing_on_one_conversation_one_wins_one_gets_409(live_api, tenant_key,
                                                                        fake_llm):
    fake_llm.latency(500)  # the winner is still in flight when the loser arrives
    with live_api.client(tenant_key) as client:
        cid = client.ask("How many flights are there?")["conversation_id"]
    barrier, outcomes = threading.Barrier(2), []

    def ask(n: int) -> None:
        with live_api.client(tenant_key) as racer:
            barrier.wait(10)
            try:
                outcomes.append(("accepted", racer.submit(f"racer {n}", conversation_id=cid)))
            except ApiError as exc:
                outcomes.append((exc.status, exc.problem))

    racers = [threading.Thread(target=ask, args=(n,)) for n in range(2)]
    for t in racers:
        t.start()
    for t in racers:
        t.join(30)
    assert sorted(str(kind) for kind, _ in outcomes) == ["409", "accepted"], outcomes
    winner = next(body for kind, body in outcomes if kind == "accepted")
    problem = next(body for kind, body in outcomes if kind == 409)
    assert problem["job_id"] == winner["job_id"]
    with live_api.client(tenant_key) as client:
        assert client.wait(winner["job_id"])["status"] == "succeeded"
        assert client.submit("and after it?", conversation_id=cid)["conversation_id"] == cid


def test_delete_removes_the_history_but_not_the_jobs(client, auth, held, fake_llm):
    busy = held.hold()
    resp = client.delete(f"/v1/conversations/{busy['conversation_id']}", headers=auth)
    assert resp.status_code == 409 and resp.get_json()["job_id"] == busy["job_id"]
    assert client.get(f"/v1/conversations/{busy['conversation_id']}", headers=auth).status_code == 200

    job = client.post("/v1/jobs", json={"message": "How many flights are there?"},
                      headers=auth).get_json()
    wait_for_status(client, auth, job["job_id"])
    cid = job["conversation_id"]
    resp = client.delete(f"/v1/conversations/{cid}", headers=auth)
    assert resp.status_code == 204 and resp.get_data() == b""
    assert client.get(f"/v1/conversations/{cid}", headers=auth).status_code == 404
    assert client.delete(f"/v1/conversations/{cid}", headers=auth).status_code == 404
    listed = client.get("/v1/conversations", headers=auth).get_json()["items"]
    assert cid not in [c["conversation_id"] for c in listed]
    assert client.get(f"/v1/jobs/{job['job_id']}", headers=auth).get_json()["status"] == "succeeded"
    assert client.post("/v1/jobs", json={"message": "more", "conversation_id": cid},
                       headers=auth).status_code == 404
