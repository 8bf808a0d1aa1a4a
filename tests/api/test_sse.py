"""GET /v1/jobs/{id}/events against the real API under gunicorn (gevent), a real Celery
worker, real Redis and MariaDB: order, ids, resume without loss or duplicates, late
subscribers, heartbeats, answer deltas, and the safety net for unpublished ends."""
from __future__ import annotations

import itertools
import json
import time

import httpx
import pytest

from shared.events import stream_key
from sunrise.client import TERMINAL
from tests.utils.held_jobs import HeldJobs, event_log

pytestmark = pytest.mark.usefixtures("celery_worker")

QUESTION = "How many flights did each carrier fly?"


@pytest.fixture
def held(settings, tenant_key, celery_app):
    with HeldJobs(settings, tenant_key, celery_app) as jobs:
        yield jobs


def read_frames(api, key: str, job_id: str, *, headers: dict | None = None,
                params: dict | None = None, limit_s: float = 60.0):
    """The raw SSE stream read to its end (EOF): (response, frames). A frame is a dict of
    its fields; a comment frame is ``{"comment": text}``. Fails after ``limit_s``."""
    frames, fields = [], {}
    deadline = time.monotonic() + limit_s
    with httpx.stream("GET", f"{api.base_url}/v1/jobs/{job_id}/events",
                      headers={"Authorization": f"Bearer {key}", **(headers or {})},
                      params=params, timeout=httpx.Timeout(10, connect=5)) as resp:
        for line in resp.iter_lines():
            assert time.monotonic() < deadline, f"the stream did not end within {limit_s} s"
            if line.startswith(":"):
                frames.append({"comment": line[1:].strip()})
            elif line == "":
                if fields:
                    frames.append(fields)
                fields = {}
            else:
                name, _, value = line.partition(":")
                fields[name] = value.removeprefix(" ")
    return resp, frames


def events_of(frames: list[dict]) -> list[dict]:
    return [{**f, "data": json.loads(f["data"])} for f in frames if "event" in f]


def order(event_id: str) -> tuple[int, int]:
    ms, _, seq = event_id.partition("-")
    return int(ms), int(seq)


def test_a_job_streams_in_order_with_ids_and_exactly_one_terminal(live_api, tenant_key,
                                                                   fake_llm):
    with live_api.client(tenant_key) as client:
        job_id = client.submit(QUESTION)["job_id"]
        resp, frames = read_frames(live_api, tenant_key, job_id)
        job = client.get(job_id)
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("text/event-stream")
    assert resp.headers["x-accel-buffering"] == "no"
    assert resp.headers["cache-control"] == "no-cache"
    events = events_of(frames)
    names = [e["event"] for e in events]
    assert names[:2] == ["queued", "started"], names
    assert names[-1] == "succeeded" and sum(n in TERMINAL for n in names) == 1, names
    assert frames[-1].get("event") == "succeeded", "the stream closes after the terminal event"
    ids = [e["id"] for e in events]
    assert all(ids) and ids == sorted(ids, key=order) and len(set(ids)) == len(ids)
    llm_calls = [e["data"] for e in events if e["event"] == "llm_call"]
    assert [c["round"] for c in llm_calls] == [0, 1]
    assert all(c["context_tokens"] > 0 and c["output_tokens"] > 0 for c in llm_calls), llm_calls
    tool_call = next(e["data"] for e in events if e["event"] == "tool_call")
    assert set(tool_call) >= {"round", "query_id", "sql", "rows", "cached", "ms", "error"}
    assert tool_call["round"] == 1 and tool_call["query_id"] == 1 and tool_call["error"] is None
    assert events[-1]["data"] == job, "the terminal event carries the whole job"


def test_resume_after_disconnect_loses_nothing_and_repeats_nothing(live_api, tenant_key,
                                                                    fake_llm):
    fake_llm.latency(1000)  # the job is still running when the first connection drops
    with live_api.client(tenant_key) as client:
        job_id = client.submit(QUESTION)["job_id"]
        first = []
        for event in client.stream(job_id):
            first.append(event)
            if event.event == "llm_call":
                break  # leaving the generator closes the connection mid-job
        assert client.get(job_id)["status"] == "running"
        by_header = list(client.stream(job_id, last_event_id=first[-1].id))
        full = list(client.stream(job_id))
    _, by_query = read_frames(live_api, tenant_key, job_id,
                              params={"last_event_id": first[-1].id})
    assert [e.id for e in first + by_header] == [e.id for e in full]
    assert [e.event for e in first + by_header] == [e.event for e in full]
    assert [e["id"] for e in events_of(by_query)] == [e.id for e in by_header]
    assert by_header[-1].event == "succeeded"


def test_a_subscriber_after_the_end_gets_the_history_then_the_terminal(live_api, tenant_key,
                                                                       fake_llm):
    with live_api.client(tenant_key) as client:
        job = client.ask(QUESTION)
        late = list(client.stream(job["job_id"]))
        assert [e.event for e in late][:2] == ["queued", "started"]
        assert late[-1].event == "succeeded" and late[-1].data == job
        # Resuming from the terminal event: nothing more to say, and 204 stops
        # EventSource from reconnecting for ever.
        assert list(client.stream(job["job_id"], last_event_id=late[-1].id)) == []
    resp, frames = read_frames(live_api, tenant_key, job["job_id"],
                               headers={"Last-Event-ID": late[-1].id})
    assert resp.status_code == 204 and frames == []


def test_an_expired_stream_still_ends_with_the_terminal_event(live_api, tenant_key, settings,
                                                             fake_llm):
    with live_api.client(tenant_key) as client:
        job = client.ask(QUESTION)
        key = stream_key("job", job["job_id"])
        event_log(settings).client.delete(key, f"{key}:terminal")
        late = list(client.stream(job["job_id"], idle_timeout=5))
    assert [e.event for e in late] == ["succeeded"]
    assert late[0].id and late[0].data == job


def test_heartbeats_keep_an_idle_stream_open_until_the_end(live_api, tenant_key, held):
    job = held.hold()
    with live_api.client(tenant_key) as client:
        heartbeats = 0
        deadline = time.monotonic() + 30
        with httpx.stream("GET", f"{live_api.base_url}/v1/jobs/{job['job_id']}/events",
                          params={"access_token": tenant_key}, timeout=10) as resp:
            assert resp.status_code == 200
            lines = resp.iter_lines()
            for line in lines:
                assert time.monotonic() < deadline
                heartbeats += line == ": keep-alive"
                if heartbeats == 2:
                    break
            client.cancel(job["job_id"])
            rest = [line for line in lines if line.startswith("event:")]
    assert rest == ["event: cancelled"]


def test_an_end_that_never_reached_the_stream_is_still_delivered(live_api, tenant_key, held,
                                                                 settings):
    job = held.hold()
    with live_api.client(tenant_key) as client:
        events = client.stream(job["job_id"], timeout=30)
        assert next(events).event == "queued"
        held.end_without_event(job["job_id"])
        terminal = next(events)
    assert terminal.event == "failed" and terminal.id, "published by the API, with an id"
    assert terminal.data["error"]["code"] == "worker_lost"
    assert event_log(settings).last(job["job_id"]).event == "failed"


def test_the_answer_streams_as_growing_answer_delta_events(live_api, tenant_key, fake_llm):
    answer = " ".join(f"word{i}" for i in range(150))
    marker = fake_llm.scenario("streamed-answer", [
        {"tool_calls": [{"sql": "SELECT count(*) AS n FROM flights"}]},
        {"text": json.dumps({"answerText": answer, "charts": []})},
    ])
    fake_llm.latency(1500)  # spread over the reply's deltas, as a real model writes
    with live_api.client(tenant_key) as client:
        events = list(client.stream(client.submit(f"{marker} count them")["job_id"]))
    deltas = [e.data["text"] for e in events if e.event == "answer_delta"]
    assert len(deltas) >= 3, deltas
    assert all(b.startswith(a) and len(b) > len(a) for a, b in itertools.pairwise(deltas))
    assert answer.startswith(deltas[0]) and deltas[-1] == answer
    assert [e.event for e in events].index("answer_delta") > 0
    assert events[-1].event == "succeeded"
    assert events[-1].data["result"]["answer_text"] == answer
    assert events[-1].data["result"]["parse_path"] == "direct"


def test_thinking_summaries_reach_subscribers_as_thinking_events(live_api, tenant_key,
                                                                 fake_llm):
    marker = fake_llm.scenario("thinking-events", [
        {"thinking": "Plan: count the flights in one query.",
         "tool_calls": [{"sql": "SELECT count(*) AS n FROM flights"}]},
        {"thinking": "336776 rows: that is the answer.",
         "text": json.dumps({"answerText": "There were 336,776 flights.", "charts": []})},
    ])
    with live_api.client(tenant_key) as client:
        events = list(client.stream(client.submit(f"{marker} count them")["job_id"]))
    names = [e.event for e in events]
    thinking = [e.data for e in events if e.event == "thinking"]
    assert [t["text"] for t in thinking] == ["Plan: count the flights in one query.",
                                             "336776 rows: that is the answer."]
    assert [t["round"] for t in thinking] == [0, 1]
    # Each round's thinking comes before the round's llm_call (which follows the reply).
    assert names.index("thinking") < names.index("llm_call") < names.index("tool_call")
    assert events[-1].event == "succeeded"
    assert "336776 rows" not in json.dumps(events[-1].data), "thinking is never stored"


def test_a_reply_that_is_not_json_sends_no_deltas_and_is_recovered(live_api, tenant_key,
                                                                   fake_llm):
    answer = {"answerText": "There are many flights.", "charts": []}
    marker = fake_llm.scenario("prose-answer", [
        {"text": f"Sure! Here is what I found: {json.dumps(answer)} Hope that helps."},
    ])
    with live_api.client(tenant_key) as client:
        events = list(client.stream(client.submit(f"{marker} count them")["job_id"]))
    assert "answer_delta" not in [e.event for e in events]
    assert events[-1].data["result"]["answer_text"] == answer["answerText"]
    assert events[-1].data["result"]["parse_path"] == "anchored"


def test_bad_resume_ids_and_foreign_jobs_are_refused(live_api, tenant_key, held):
    url = f"{live_api.base_url}/v1/jobs/{held.hold()['job_id']}/events"
    auth = {"Authorization": f"Bearer {tenant_key}"}
    assert httpx.get(url, headers={**auth, "Last-Event-ID": "nope"}).status_code == 400
    assert httpx.get(url, headers=auth, params={"last_event_id": "1-x"}).status_code == 422
    # Digits, but past Redis' unsigned 64-bit range: refused before any read.
    for too_big in ("99999999999999999999-0", "1-18446744073709551616"):
        resp = httpx.get(url, headers={**auth, "Last-Event-ID": too_big})
        assert resp.status_code == 400, resp.text
        assert resp.headers["content-type"] == "application/problem+json"
        assert too_big in resp.json()["detail"]
    assert httpx.get(url).status_code == 401
    missing = f"{live_api.base_url}/v1/jobs/00000000-0000-4000-8000-000000000000/events"
    assert httpx.get(missing, headers=auth).status_code == 404


def test_an_impossible_resume_id_on_an_ended_job_is_refused_up_front(live_api, tenant_key,
                                                                     fake_llm):
    with live_api.client(tenant_key) as client:
        job = client.ask(QUESTION)
    resp, frames = read_frames(live_api, tenant_key, job["job_id"],
                               headers={"Last-Event-ID": "99999999999999999999-0"})
    assert resp.status_code == 400 and frames == []
