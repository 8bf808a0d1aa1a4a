"""Standard Celery tooling against real worker processes: inspect, events, Flower, routing,
warm shutdown; and what a worker process exposes — its metrics port and JSON logs."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import httpx
import pytest
import redis
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import select

from bench.worker_fleet import settings_env
from shared.celery_factory import ASSEMBLE_BATCH, IMPORT_DATASET, REAP, RUN_JOB, make_celery
from shared.config import PROJECT_ROOT
from shared.db import session_scope
from shared.models import Job, LlmCall
from tests.ops.conftest import free_port
from tests.utils.waiting import wait_for_status, wait_until

pytestmark = pytest.mark.slow

QUESTION = "How many flights did each carrier fly?"


def celery_cli(settings, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "celery", "-A", "worker.celery_app", *args],
                          cwd=PROJECT_ROOT, env=settings_env(settings), capture_output=True,
                          text=True, timeout=timeout, check=False)


def submit(client, auth) -> str:
    resp = client.post("/v1/jobs", json={"message": QUESTION}, headers=auth)
    assert resp.status_code == 202, resp.get_data(as_text=True)
    return resp.get_json()["job_id"]


def job_row(settings, job_id: str) -> Job:
    with session_scope(settings.database_url) as s:
        return s.get(Job, job_id)


def scrape(url: str) -> dict[tuple[str, tuple], float]:
    text = httpx.get(url, timeout=10).text
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def _stop(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


def test_tasks_are_routed_to_named_queues(ops_settings):
    router = make_celery(ops_settings).amqp.router
    assert router.route({}, RUN_JOB)["queue"].name == "chat"
    assert router.route({}, REAP)["queue"].name == "chat"
    assert router.route({}, ASSEMBLE_BATCH)["queue"].name == "reports"
    assert router.route({}, IMPORT_DATASET)["queue"].name == "datasets"


def test_a_worker_process_works_with_celery_tooling_and_exposes_metrics_and_json_logs(
        ops_settings, ops_client, ops_auth, start_worker, fake_llm, tmp_path):
    auth, _ = ops_auth
    port = free_port()
    # Task events are off unless asked for (`celery events` below reads them).
    worker = start_worker(SUNRISE_LOG_FORMAT="json", SUNRISE_WORKER_METRICS_PORT=str(port),
                          SUNRISE_TASK_EVENTS="1")
    events_log = tmp_path / "events.txt"
    flower_port = free_port()
    flower_url = f"http://127.0.0.1:{flower_port}"
    flower_auth = ("ops", "flower-test")
    with open(events_log, "wb") as out, open(tmp_path / "flower.txt", "wb") as flower_out:
        events = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "worker.celery_app", "events", "--dump"],
            cwd=PROJECT_ROOT, env=settings_env(ops_settings), stdout=out, stderr=subprocess.STDOUT)
        flower = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "worker.celery_app", "flower",
             "--address=127.0.0.1", f"--port={flower_port}", "--basic_auth=ops:flower-test"],
            cwd=PROJECT_ROOT, env=settings_env(ops_settings), stdout=flower_out,
            stderr=subprocess.STDOUT)
    try:
        # Flower imports the app and connects to the broker first: on a loaded machine
        # that alone took over 30 s. Bounded, and it stops early if Flower died.
        wait_until(lambda: flower.poll() is not None or _answers(f"{flower_url}/healthcheck"),
                   timeout=90, interval=0.2)
        assert flower.poll() is None, (tmp_path / "flower.txt").read_text()[-3000:]
        queues = celery_cli(ops_settings, "inspect", "active_queues", "--json", "-d",
                            worker.nodename, "--timeout", "5")
        assert queues.returncode == 0, queues.stderr
        names = {q["name"] for q in json.loads(queues.stdout)[worker.nodename]}
        assert names == {"chat", "reports"}

        # Long enough to catch the job in flight: `celery inspect` is a whole Python start
        # of its own, which took over 2 s on a loaded machine.
        fake_llm.latency(6000)
        job_id = submit(ops_client, auth)
        wait_until(lambda: job_row(ops_settings, job_id).status == "running", timeout=30)
        active = celery_cli(ops_settings, "inspect", "active", "--json", "-d", worker.nodename,
                            "--timeout", "5")
        assert active.returncode == 0, active.stderr
        tasks = json.loads(active.stdout)[worker.nodename]
        assert [(t["name"], t["args"], t["id"]) for t in tasks] == [(RUN_JOB, [job_id], job_id)]

        job = wait_for_status(ops_client, auth, job_id, timeout=60)
        assert job["status"] == "succeeded", job
        wait_until(lambda: "task succeeded" in events_log.read_text(errors="replace"),
                   timeout=20)
        seen = wait_until(lambda: [t for t in httpx.get(
            f"{flower_url}/api/tasks", auth=flower_auth, timeout=10).json().values()
            if t["state"] == "SUCCESS" and job_id in t["args"]], timeout=20, interval=0.2)
        assert seen[0]["name"] == RUN_JOB and seen[0]["worker"] == worker.nodename
        workers = httpx.get(f"{flower_url}/api/workers", params={"refresh": 1},
                            auth=flower_auth, timeout=20).json()
        assert worker.nodename in workers
    finally:
        for tool in (events, flower):
            _stop(tool)
    finished = [line for line in events_log.read_text(errors="replace").splitlines()
                if f"task succeeded: {RUN_JOB}(" in line]
    assert finished and worker.nodename in finished[0]
    started = [line for line in events_log.read_text(errors="replace").splitlines()
               if f"task received: {RUN_JOB}(" in line]
    assert started and f"args=['{job_id}']" in started[0]

    with session_scope(ops_settings.database_url) as s:
        calls = s.scalars(select(LlmCall).where(LlmCall.job_id == job_id)).all()
    metrics = scrape(f"http://127.0.0.1:{port}/metrics")
    assert metrics[("sunrise_jobs_finished_total", (("status", "succeeded"),))] == 1
    model = (("model", calls[0].model),)
    assert metrics[("sunrise_llm_calls_total", model)] == len(calls)
    assert metrics[("sunrise_llm_tokens_total", (("kind", "output"), *model))] == sum(
        c.output_tokens for c in calls)
    assert metrics[("sunrise_job_total_seconds_count", ())] == 1

    lines = [json.loads(line) for line in worker.log().splitlines() if line.startswith("{")]
    mine = [line for line in lines if line.get("job_id") == job_id]
    assert len(mine) >= 3, worker.log()[-3000:]
    tenant_id = job_row(ops_settings, job_id).tenant_id
    for line in mine:
        assert {"time", "level", "name", "message", "job_id", "tenant", "round"} <= set(line)
        assert line["tenant"] in (tenant_id, None)  # None only before the job is claimed
    assert any(line["round"] is not None and line["tenant"] == tenant_id for line in mine)
    assert any("started" in line["message"] and line["tenant"] == tenant_id for line in mine)


def test_warm_shutdown_finishes_the_job_in_flight(ops_settings, ops_client, ops_auth,
                                                  start_worker, fake_llm):
    auth, _ = ops_auth
    worker = start_worker(concurrency=2, SUNRISE_WORKER_METRICS_PORT="0")
    fake_llm.latency(1000)
    job_id = submit(ops_client, auth)
    wait_until(lambda: job_row(ops_settings, job_id).status == "running", timeout=30)
    started = time.monotonic()
    worker.terminate()  # SIGTERM: warm shutdown
    assert worker.wait(timeout=60) == 0, worker.log()[-3000:]
    row = job_row(ops_settings, job_id)
    assert row.status == "succeeded" and row.attempt == 1, (row.status, row.error_code)
    assert row.finished_at is not None and time.monotonic() - started < 60
    broker = redis.Redis.from_url(ops_settings.redis_url)
    assert broker.llen("chat") == 0 and broker.hlen("unacked") == 0, "nothing left behind"
