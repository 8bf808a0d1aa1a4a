"""Prometheus metrics: a job moves the worker counters by exactly what the database
records, and /metrics adds the deployment-wide figures read at scrape time."""
from __future__ import annotations

import json
import time
import types
import uuid

import httpx
import pytest
from prometheus_client import CollectorRegistry
from prometheus_client.parser import text_string_to_metric_families

from api.fleet_metrics import FleetCollector
from api.sse_subscribers import SUBSCRIBERS_KEY, count_subscribers
from shared.celery_factory import QUEUES
from shared.db import session_factory, session_scope
from shared.keys import create_key
from shared.metrics import Metrics
from shared.redis_client import redis_for
from tests.utils.jobs import create_job, job_view, llm_calls, marker
from tests.utils.waiting import wait_for_status, wait_until

BY_CARRIER = "SELECT carrier, count(*) AS flights FROM flights GROUP BY 1 ORDER BY 2 DESC"


def samples(text: str) -> dict[tuple[str, tuple], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def scrape(client) -> dict[tuple[str, tuple], float]:
    resp = client.get("/metrics")
    assert resp.status_code == 200 and resp.mimetype == "text/plain"
    return samples(resp.get_data(as_text=True))


def test_one_job_moves_the_counters_by_what_the_database_records(settings, fake_llm):
    from shared.events import EventLog
    from worker.jobs.runner import JobRunner

    registry = CollectorRegistry()
    metrics = Metrics(registry)
    runner = JobRunner(settings, events=EventLog(redis_for(settings.redis_url)), metrics=metrics)
    # The same SQL twice: the second is answered from the per-job cache.
    scenario = fake_llm.scenario(f"metrics-{uuid.uuid4().hex[:6]}", [
        {"tool_calls": [{"sql": BY_CARRIER}]},
        {"tool_calls": [{"sql": BY_CARRIER}]},
        {"text": "Some prose first. " + json.dumps({"answerText": "UA flew most.",
                                                    "charts": []})},
    ])
    job_id, _ = create_job(settings, f"{scenario} {marker()}")
    assert runner.run(job_id) == "succeeded"
    job, calls = job_view(settings, job_id), llm_calls(settings, job_id)
    value = registry.get_sample_value
    model = calls[0].model

    assert value("sunrise_jobs_finished_total", {"status": "succeeded"}) == 1
    assert value("sunrise_jobs_finished_total", {"status": "failed"}) == 0
    assert value("sunrise_llm_calls_total", {"model": model}) == len(calls) == 3
    for kind, column in (("input", "input_tokens"), ("output", "output_tokens"),
                         ("cache_read", "cache_read_tokens"),
                         ("cache_write", "cache_creation_tokens")):
        expected = sum(getattr(c, column) for c in calls)
        assert value("sunrise_llm_tokens_total", {"model": model, "kind": kind}) == expected
    assert value("sunrise_llm_cost_usd_total", {"model": model}) == pytest.approx(
        float(sum(c.cost_usd for c in calls)), rel=1e-9)
    prompt = sum(c.input_tokens + c.cache_read_tokens + c.cache_creation_tokens for c in calls)
    ratio = value("sunrise_prompt_cache_hit_ratio")
    assert ratio == pytest.approx(sum(c.cache_read_tokens for c in calls) / prompt)
    assert 0 < ratio < 1, "later rounds read the prefix the first call wrote"
    assert value("sunrise_sql_queries_total") == job["usage"]["sql_executed"] == 1
    assert value("sunrise_sql_cache_hits_total") == job["usage"]["sql_cache_hits"] == 1
    assert value("sunrise_job_tool_rounds_sum") == job["usage"]["tool_rounds"] == 2
    assert value("sunrise_answer_parse_path_total", {"path": job["result"]["parse_path"]}) == 1
    for name in ("queue_wait", "llm", "sql", "run", "total"):
        assert value(f"sunrise_job_{name}_seconds_count") == 1, name
    assert value("sunrise_job_llm_seconds_sum") == pytest.approx(job["usage"]["llm_ms"] / 1000)
    assert value("sunrise_job_run_seconds_sum") == pytest.approx(job["usage"]["wall_ms"] / 1000)


def test_failed_jobs_count_by_error_code(settings, fake_llm):
    from worker.jobs.runner import JobRunner

    registry = CollectorRegistry()
    runner = JobRunner(settings, metrics=Metrics(registry))
    scenario = fake_llm.scenario("metrics-refuse", [{"stop_reason": "refusal", "text": ""}])
    job_id, _ = create_job(settings, f"{scenario} {marker()}")
    assert runner.run(job_id) == "failed"
    assert registry.get_sample_value("sunrise_jobs_finished_total", {"status": "failed"}) == 1
    assert registry.get_sample_value("sunrise_job_errors_total", {"code": "refused"}) == 1


def test_metrics_endpoint_moves_when_a_worker_runs_a_job(client, auth, celery_worker, fake_llm):
    before = scrape(client)
    job_id = client.post("/v1/jobs", json={"message": "How many flights did each carrier fly?"},
                         headers=auth).get_json()["job_id"]
    assert wait_for_status(client, auth, job_id)["status"] == "succeeded"
    finished = ("sunrise_jobs_finished_total", (("status", "succeeded"),))
    # The worker counts the job just after publishing its terminal event: poll briefly.
    after = wait_until(lambda: (m := scrape(client)).get(finished, 0) > before.get(finished, 0)
                       and m, timeout=10)

    def moved(name: str, **labels) -> float:
        key = (name, tuple(sorted(labels.items())))
        return after.get(key, 0) - before.get(key, 0)

    assert sum(v for (name, _), v in after.items() if name == "sunrise_llm_calls_total") >= 2
    assert moved("sunrise_job_total_seconds_count") >= 1
    # Read at scrape time from Redis and MariaDB.
    assert after[("sunrise_metrics_source_up", (("source", "redis"),))] == 1
    assert after[("sunrise_metrics_source_up", (("source", "database"),))] == 1
    for queue in QUEUES:
        assert ("sunrise_queue_depth", (("queue", queue),)) in after
    assert ("sunrise_queue_depth", (("queue", "datasets"),)) in after
    assert ("sunrise_datasets", (("status", "importing"),)) in after
    assert after[("sunrise_oldest_import_age_seconds", ())] >= 0
    for status in ("queued", "running"):
        assert ("sunrise_jobs", (("status", status),)) in after
    assert ("sunrise_sse_subscribers", ()) in after


def test_queue_depth_sums_every_priority_list_of_a_queue(settings):
    client = redis_for(settings.redis_url)
    queue = f"ops-depth-{uuid.uuid4().hex[:8]}"
    client.rpush(queue, "a", "b")
    client.rpush(f"{queue}\x06\x166", "c")
    try:
        services = types.SimpleNamespace(redis=client,
                                         sessions=session_factory(settings.database_url))
        registry = CollectorRegistry()
        registry.register(FleetCollector(services, queues=[queue]))
        assert registry.get_sample_value("sunrise_queue_depth", {"queue": queue}) == 3
    finally:
        client.delete(queue, f"{queue}\x06\x166")


def test_queued_jobs_and_the_oldest_age_come_from_the_database(client, settings):
    with session_scope(settings.database_url) as s:
        create_key(s, name := f"idle-{uuid.uuid4().hex[:8]}")
    create_job(settings, "never enqueued, so it stays queued", tenant=name)
    metrics = scrape(client)
    assert metrics[("sunrise_jobs", (("status", "queued"),))] >= 1
    assert metrics[("sunrise_oldest_queued_job_age_seconds", ())] >= 0


def test_sse_subscribers_gauge_follows_open_streams(client, settings):
    with session_scope(settings.database_url) as s:
        key = create_key(s, name := f"sse-{uuid.uuid4().hex[:8]}")
    job_id, _ = create_job(settings, "stays queued: nothing enqueued it", tenant=name)
    def gauge():
        return scrape(client)[("sunrise_sse_subscribers", ())]
    before = gauge()
    resp = client.get(f"/v1/jobs/{job_id}/events", headers={"Authorization": f"Bearer {key}"},
                      buffered=False)
    frames = iter(resp.response)
    assert next(frames).startswith(b"retry:")
    assert gauge() == before + 1
    resp.close()
    assert gauge() == before


def test_a_dead_process_streams_stop_counting_at_their_end_time(settings):
    client = redis_for(settings.redis_url)
    base = count_subscribers(client)
    client.zadd(SUBSCRIBERS_KEY, {"job:gone:1:x": time.time() - 1,
                                  "job:alive:1:y": time.time() + 60})
    try:
        assert count_subscribers(client) == base + 1
    finally:
        client.zrem(SUBSCRIBERS_KEY, "job:gone:1:x", "job:alive:1:y")


def test_worker_metrics_servers_on_one_host_take_the_next_free_port():
    from tests.ops.conftest import free_port
    from worker.observability import start_metrics_server

    registry = CollectorRegistry()
    Metrics(registry)
    port = free_port()
    first = start_metrics_server("127.0.0.1", port, registry=registry)
    try:
        second = start_metrics_server("127.0.0.1", port, registry=registry)
        try:
            assert first.port == port and second.port > port
            assert "sunrise_jobs_finished_total" in httpx.get(second.url, timeout=10).text
        finally:
            second.stop()
    finally:
        first.stop()
