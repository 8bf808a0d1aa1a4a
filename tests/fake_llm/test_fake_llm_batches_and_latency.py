"""Message Batches through `client.messages.batches`, latency, and throughput."""

from __future__ import annotations

import asyncio
import time

import httpx

from tests.utils.own_loop import run_in_own_loop

MODEL = "claude-sonnet-4-6"
HELLO = {"model": MODEL, "max_tokens": 64, "messages": [{"role": "user", "content": "hello"}]}


def test_batch_is_in_progress_then_ends_with_jsonl_results(client, control):
    batch = client.messages.batches.create(
        requests=[
            {"custom_id": "ok", "params": HELLO},
            {"custom_id": "bad", "params": {"model": MODEL, "messages": []}},
        ]
    )
    assert batch.id.startswith("msgbatch_") and batch.processing_status == "in_progress"
    assert batch.request_counts.processing == 2 and batch.results_url is None

    control.post("/clock", json={"advance_s": 5})
    ended = client.messages.batches.retrieve(batch.id)
    assert ended.processing_status == "ended" and ended.ended_at is not None
    assert (ended.request_counts.succeeded, ended.request_counts.errored) == (1, 1)
    assert ended.results_url.endswith(f"/v1/messages/batches/{batch.id}/results")

    results = {r.custom_id: r.result for r in client.messages.batches.results(batch.id)}
    assert results["ok"].type == "succeeded"
    assert results["ok"].message.usage.service_tier == "batch"
    assert results["bad"].type == "errored"
    assert results["bad"].error.error.type == "invalid_request_error"
    assert [b.id for b in client.messages.batches.list()] == [batch.id]


def test_cancelled_batch_ends_with_canceled_results(client):
    batch = client.messages.batches.create(requests=[{"custom_id": "a", "params": HELLO}])
    cancelled = client.messages.batches.cancel(batch.id)
    assert cancelled.processing_status == "ended" and cancelled.request_counts.canceled == 1
    assert [r.result.type for r in client.messages.batches.results(batch.id)] == ["canceled"]


def test_latency_applies_to_plain_and_streamed_calls(client, control):
    control.post("/latency", json={"fixed_ms": 250, "jitter_ms": 50}).raise_for_status()
    started = time.monotonic()
    client.messages.create(**HELLO)
    plain = time.monotonic() - started
    started = time.monotonic()
    with client.messages.stream(**HELLO) as stream:
        stream.until_done()
    streamed = time.monotonic() - started
    assert 0.25 <= plain < 1.0
    assert 0.25 <= streamed < 1.0


def test_hundreds_of_concurrent_requests_all_succeed(server):
    """Throughput is measured in bench/; here: 300 concurrent calls, none refused."""

    async def burst(count: int) -> list[int]:
        limits = httpx.Limits(max_connections=32)
        async with httpx.AsyncClient(base_url=server.base_url, limits=limits, timeout=30) as http:
            responses = await asyncio.gather(
                *[
                    http.post("/v1/messages", json=HELLO, headers={"x-api-key": "k"})
                    for _ in range(count)
                ]
            )
        return [r.status_code for r in responses]

    statuses = run_in_own_loop(burst(300), timeout=120)
    assert statuses == [200] * 300


def test_unknown_auth_scheme_is_401(server):
    response = httpx.post(
        f"{server.base_url}/v1/messages/batches",
        json={"requests": []},
        headers={"authorization": "Basic abc"},
    )
    assert response.status_code == 401
    assert response.json()["error"]["type"] == "authentication_error"
