"""Many open streams on ONE API process (gunicorn, a single gevent worker): 200
subscribers connect to a job held still, then the real worker runs it, and every one of
them receives the same events, ids and terminal job."""
from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from api.sse_subscribers import count_subscribers
from shared.redis_client import redis_for
from sunrise.client import SseEvent, parse_sse
from tests.utils.held_jobs import HeldJobs
from tests.utils.own_loop import run_in_own_loop
from tests.utils.redis_probe import blocked_reads

pytestmark = [pytest.mark.usefixtures("celery_worker"), pytest.mark.slow]

SUBSCRIBERS = 200


@pytest.fixture
def held(settings, tenant_key, celery_app):
    with HeldJobs(settings, tenant_key, celery_app) as jobs:
        yield jobs


async def _subscribe(http: httpx.AsyncClient, job_id: str, connected: list,
                     all_connected: asyncio.Event) -> list[SseEvent]:
    lines: list[str] = []
    async with http.stream("GET", f"/v1/jobs/{job_id}/events") as resp:
        assert resp.status_code == 200
        async for line in resp.aiter_lines():
            if line.startswith("retry:"):  # the server's first frame: this stream is open
                connected.append(1)
                if len(connected) == SUBSCRIBERS:
                    all_connected.set()
            lines.append(line)
    return list(parse_sse(iter(lines)))


def test_200_concurrent_subscribers_on_one_api_process(live_api, tenant_key, held, settings):
    job = held.hold("How many flights did each carrier fly?")

    async def run() -> tuple[list[list[SseEvent]], int, int]:
        limits = httpx.Limits(max_connections=SUBSCRIBERS + 10)
        async with httpx.AsyncClient(base_url=live_api.base_url, limits=limits,
                                     timeout=httpx.Timeout(30, connect=20),
                                     headers={"Authorization": f"Bearer {tenant_key}"}) as http:
            # Reads left blocked by earlier tests' hubs can only end meanwhile, never start.
            before = await asyncio.to_thread(blocked_reads, settings.redis_url)
            connected: list[int] = []
            all_connected = asyncio.Event()
            streams = [asyncio.create_task(_subscribe(http, job["job_id"], connected,
                                                      all_connected))
                       for _ in range(SUBSCRIBERS)]
            await asyncio.wait_for(all_connected.wait(), 90)
            # With every stream open and idle, the same process still answers.
            assert (await http.get("/healthz")).status_code == 200
            open_streams = await asyncio.to_thread(count_subscribers,
                                                   redis_for(settings.redis_url))
            blocked = await asyncio.to_thread(blocked_reads, settings.redis_url) - before
            await asyncio.to_thread(held.release, job["job_id"])
            return await asyncio.wait_for(asyncio.gather(*streams), 90), open_streams, blocked

    started = time.monotonic()
    results, open_streams, blocked = run_in_own_loop(run())
    assert open_streams >= SUBSCRIBERS, "every open stream is counted by the gauge"
    assert blocked <= 1, "the streams share one Redis reader instead of a connection each"
    with live_api.client(tenant_key) as client:
        final = client.get(job["job_id"])
    assert final["status"] == "succeeded", final
    reference = [(e.id, e.event) for e in results[0]]
    assert reference[0][1] == "queued" and reference[-1][1] == "succeeded"
    assert "started" in [name for _, name in reference]
    for events in results:
        assert [(e.id, e.event) for e in events] == reference
        assert events[-1].data == final
    assert time.monotonic() - started < 240
