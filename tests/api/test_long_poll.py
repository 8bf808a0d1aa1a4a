"""GET /v1/jobs/{id}?wait=N on real Redis, MariaDB and a real Celery worker: it returns
as soon as the job ends, or the current state after N s, and waits on Redis without
holding a database connection (or, under gevent, a thread)."""
from __future__ import annotations

import asyncio
import threading
import time

import httpx
import pytest
import redis

from api.event_hub import EventHub
from shared.config import Settings
from tests.utils.held_jobs import HeldJobs
from tests.utils.own_loop import run_in_own_loop
from tests.utils.redis_probe import blocked_reads
from tests.utils.waiting import wait_until

pytestmark = pytest.mark.usefixtures("celery_worker")

CLIENT_NAME = "sunrise-long-poll-test"


@pytest.fixture
def settings(base_settings) -> Settings:
    # A URL of its own gives the app under test an engine (pool) of its own to inspect.
    return base_settings.model_copy(update={
        "database_url": f"{base_settings.database_url}?charset=utf8mb4"})


@pytest.fixture
def app(settings):
    from api import create_app

    app = create_app(settings=settings)
    services = app.extensions["sunrise"]
    # The same hub on the same real Redis, with a client name on its reader so that
    # CLIENT LIST shows this app's blocked reads apart from every other process's.
    services.event_hub = EventHub(services.events, lambda: redis.Redis.from_url(
        settings.redis_url, decode_responses=True, single_connection_client=True,
        client_name=CLIENT_NAME))
    return app


@pytest.fixture
def held(settings, tenant_key, celery_app):
    with HeldJobs(settings, tenant_key, celery_app) as jobs:
        yield jobs


def blocked_waiters(settings: Settings) -> int:
    """Connections of the app under test now blocked in XREAD on Redis."""
    return blocked_reads(settings.redis_url, client_name=CLIENT_NAME)


class Poller(threading.Thread):
    """One long-poll from its own thread: ``status``, ``body`` and ``elapsed`` when done."""

    def __init__(self, app, auth: dict, job_id: str, wait: float):
        super().__init__(daemon=True)
        self.client, self.auth, self.url = app.test_client(), auth, f"/v1/jobs/{job_id}?wait={wait}"
        self.status = self.body = self.elapsed = None

    def run(self) -> None:
        started = time.monotonic()
        resp = self.client.get(self.url, headers=self.auth)
        self.elapsed = time.monotonic() - started
        self.status, self.body = resp.status_code, resp.get_json()

    def result(self, timeout: float = 40.0) -> dict:
        self.join(timeout)
        assert not self.is_alive(), "the long-poll did not return"
        assert self.status == 200, self.body
        return self.body


def test_waiters_wake_when_the_job_ends_holding_no_database_or_redis_connection(
        app, client, auth, settings, held):
    job = held.hold()
    hub = app.extensions["sunrise"].event_hub
    pollers = [Poller(app, auth, job["job_id"], 25) for _ in range(3)]
    for p in pollers:
        p.start()
    wait_until(lambda: hub.watching() == 3)
    # Three waiters: one blocked read (the hub's), no database connection checked out.
    wait_until(lambda: blocked_waiters(settings) == 1)
    assert app.extensions["sunrise"].sessions.kw["bind"].pool.checkedout() == 0
    held.release(job["job_id"])
    results = [p.result() for p in pollers]
    final = client.get(f"/v1/jobs/{job['job_id']}", headers=auth).get_json()
    assert final["status"] == "succeeded"
    assert results == [final] * 3
    assert all(p.elapsed < 25 for p in pollers), "woken by the end, not by the timeout"
    assert hub.watching() == 0


def test_a_wait_returns_the_current_state_after_n_seconds(client, auth, held):
    job = held.hold()
    started = time.monotonic()
    body = client.get(f"/v1/jobs/{job['job_id']}?wait=1", headers=auth).get_json()
    assert time.monotonic() - started >= 0.95
    assert body["status"] == "queued" and body["job_id"] == job["job_id"]
    assert client.get(f"/v1/jobs/{job['job_id']}", headers=auth).get_json()["status"] == "queued"


def test_a_finished_job_answers_at_once(client, auth, fake_llm):
    job_id = client.post("/v1/jobs", json={"message": "How many flights are there?"},
                         headers=auth).get_json()["job_id"]
    done = client.get(f"/v1/jobs/{job_id}?wait=30", headers=auth).get_json()
    assert done["status"] == "succeeded"
    started = time.monotonic()
    again = client.get(f"/v1/jobs/{job_id}?wait=30", headers=auth).get_json()
    assert again == done and time.monotonic() - started < 10


def test_a_cancel_wakes_the_waiters(app, client, auth, settings, held):
    job = held.hold()
    poller = Poller(app, auth, job["job_id"], 25)
    poller.start()
    wait_until(lambda: app.extensions["sunrise"].event_hub.watching() == 1)
    assert client.post(f"/v1/jobs/{job['job_id']}/cancel", headers=auth).status_code == 202
    body = poller.result()
    assert body["status"] == "cancelled" and body["error"]["code"] == "cancelled"
    assert poller.elapsed < 25


def test_an_end_that_was_never_published_is_noticed_before_the_wait_runs_out(
        app, auth, settings, held):
    job = held.hold()
    poller = Poller(app, auth, job["job_id"], 25)
    poller.start()
    wait_until(lambda: app.extensions["sunrise"].event_hub.watching() == 1)
    held.end_without_event(job["job_id"])
    assert poller.result()["status"] == "failed"
    assert poller.elapsed < 25, "the database recheck found the end"


def test_without_redis_it_falls_back_to_polling_the_database(settings, auth, held):
    from api import create_app

    # A real fault: nothing listens on port 1, so every Redis call is refused.
    no_redis = create_app(settings=settings)
    no_redis.extensions["sunrise"].redis = redis.Redis.from_url("redis://127.0.0.1:1/0")
    job = held.hold()
    poller = Poller(no_redis, auth, job["job_id"], 25)
    poller.start()
    time.sleep(0.5)  # let it reach its polling loop; the result holds either way
    held.end_without_event(job["job_id"])
    assert poller.result()["status"] == "failed"
    assert poller.elapsed < 25


@pytest.mark.parametrize("wait", ["-1", "31", "soon"])
def test_wait_must_be_0_to_30_seconds(client, auth, held, wait):
    resp = client.get(f"/v1/jobs/{held.hold()['job_id']}?wait={wait}", headers=auth)
    assert resp.status_code == 422 and resp.mimetype == "application/problem+json"


def test_one_gevent_worker_holds_many_long_polls_at_once(live_api, tenant_key, held, settings):
    """50 waiters on a single-worker gunicorn: none takes a thread or a Redis connection,
    the worker still answers meanwhile, and all of them wake at the end."""
    job = held.hold()

    async def poll_all() -> tuple[list[dict], int]:
        limits = httpx.Limits(max_connections=100)
        async with httpx.AsyncClient(base_url=live_api.base_url, limits=limits, timeout=40,
                                     headers={"Authorization": f"Bearer {tenant_key}"}) as http:
            async def one() -> dict:
                resp = await http.get(f"/v1/jobs/{job['job_id']}", params={"wait": 30})
                return resp.json()

            # Reads left blocked by earlier tests' hubs can only end meanwhile, never start.
            before = await asyncio.to_thread(blocked_reads, settings.redis_url)
            waiters = [asyncio.create_task(one()) for _ in range(50)]
            await asyncio.sleep(1.5)  # time to arrive; the assertions hold either way
            blocked = await asyncio.to_thread(blocked_reads, settings.redis_url) - before
            assert (await http.get("/healthz")).status_code == 200
            assert not any(w.done() for w in waiters)
            await asyncio.to_thread(held.release, job["job_id"])
            return await asyncio.gather(*waiters), blocked

    results, blocked = run_in_own_loop(poll_all())
    assert {r["status"] for r in results} == {"succeeded"}
    assert len({r["finished_at"] for r in results}) == 1
    assert blocked <= 1, "one hub reader per API process, not a connection per waiter"


def test_many_waits_time_out_together_not_one_after_another(live_api, tenant_key, held):
    job = held.hold()

    async def poll_all() -> list[dict]:
        async with httpx.AsyncClient(base_url=live_api.base_url, timeout=60,
                                     limits=httpx.Limits(max_connections=100),
                                     headers={"Authorization": f"Bearer {tenant_key}"}) as http:
            return await asyncio.gather(*[
                http.get(f"/v1/jobs/{job['job_id']}", params={"wait": 2}) for _ in range(50)])

    started = time.monotonic()
    responses = run_in_own_loop(poll_all())
    assert {r.json()["status"] for r in responses} == {"queued"}
    # One after another would take 100 s; together, about 2.
    assert time.monotonic() - started < 30
