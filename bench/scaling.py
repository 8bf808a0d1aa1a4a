"""Figure: throughput grows with worker processes, and no job is lost or run twice.

One private stack (its own MariaDB database and Redis number, the offline model at
500 ms per call), then rounds of 1, 2 and 4 worker processes (threads pool, a fixed
number of threads each) against that same Redis and MariaDB. Each round submits the
same number of questions through the API code while the workers are paused (Celery's
``cancel_consumer``), starts the clock as they resume (``add_consumer``), waits for
every terminal event, then checks the ground truth: every job succeeded on its first
attempt with exactly one answer, the broker holds nothing (no queued, no unacknowledged
message), and the workers' own /metrics ports add up to the number of jobs.

Per-worker threads are kept small on purpose: with 64 threads one process would
absorb the whole load and the figure would measure nothing. A job makes 2 LLM calls
(1 SQL round), so one thread finishes at most ~1 job/s at 500 ms per call.

    python -m bench.scaling [--smoke]
"""
from __future__ import annotations

import json
import os
import statistics
import sys
import time

import httpx
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import func, select

from bench.figures import percentile, result, row, self_cpu_seconds
from bench.stack import Stack, _stat, cpu_of_command, free_port, submit
from bench.worker_fleet import WorkerProcess
from shared.celery_factory import CHAT_QUEUE, make_celery
from shared.db import session_scope
from shared.models import Job, LlmCall, Message

QUESTION = "How many flights did each carrier fly?"
LLM_LATENCY_MS = 500
FULL = {"workers": (1, 2, 4), "threads": 4, "jobs": 96, "latency_ms": LLM_LATENCY_MS}
# A smoke run proves the machinery (tests/ops), not the figure: shorter LLM waits.
SMOKE = {"workers": (1, 2), "threads": 2, "jobs": 8, "latency_ms": 100}
# Efficiency versus perfect scaling (n workers = n × the 1-worker rate) on a 2-core box.
TARGET_EFFICIENCY = 0.75


def run(smoke: bool = False) -> dict:
    """Measure jobs/s for each worker count; returns the bench result (bench.figures)."""
    plan = SMOKE if smoke else FULL
    rounds = []
    with Stack("scaling", worker_metrics_port=0) as stack:
        stack.start_fake_llm(latency_ms=plan["latency_ms"])
        api, auth = stack.api_client()
        for workers in plan["workers"]:
            rounds.append(_round(stack, api, auth, workers, plan["threads"], plan["jobs"]))
    base = rounds[0]["jobs_per_s"]
    rows = []
    for r in rounds:
        ratio = r["jobs_per_s"] / base
        wanted = TARGET_EFFICIENCY * r["workers"] if r["workers"] > 1 else None
        rows.append(row("scaling", f"{r['workers']} worker process(es) × {plan['threads']} "
                        f"threads, LLM {plan['latency_ms']} ms", f"{r['jobs_per_s']:.2f} jobs/s",
                        f"{base:.2f} jobs/s (1 worker)", ratio,
                        f"≥ {wanted:.1f}×" if wanted else "",
                        None if wanted is None else ratio >= wanted))
    bad = sum(r["lost"] + r["not_first_attempt"] + r["left_in_broker"]
              + abs(r["jobs"] - r["counted_by_workers"]) for r in rounds)
    rows.append(row("scaling", "jobs lost, retried, left in the broker or miscounted by the "
                    "workers' /metrics (all rounds)", str(bad), target="0", passed=bad == 0))
    return result("scaling", smoke, rows, llm_latency_ms=plan["latency_ms"],
                  threads_per_worker=plan["threads"], jobs_per_round=plan["jobs"], rounds=rounds)


def _round(stack: Stack, api, auth: dict, workers: int, threads: int, jobs: int) -> dict:
    ports = [free_port() for _ in range(workers)]
    fleet = [WorkerProcess(stack.settings, stack.log_dir, concurrency=threads, loglevel="WARNING",
                           SUNRISE_WORKER_METRICS_PORT=str(port)) for port in ports]
    control = make_celery(stack.settings).control
    try:
        for worker in fleet:  # they start in parallel; wait for each in turn
            worker.wait_ready(timeout=90)
        nodes = [worker.nodename for worker in fleet]
        # One job per thread first: each process pays its one-off start (DuckDB, schema,
        # SDK client) outside the clock, as a long-running worker already has.
        warm = workers * threads
        stack.wait_terminal(submit(api, auth, QUESTION, warm), timeout=120 + 10 * warm,
                            poll_s=0.05)
        # Queue every job first with the workers paused (Celery remote control), so the
        # clock measures the workers, not how fast one driver can submit.
        control.cancel_consumer(CHAT_QUEUE, destination=nodes, reply=True, timeout=10)
        job_ids = submit(api, auth, QUESTION, jobs)
        cpu = _CpuSpan(stack, fleet)
        started = time.perf_counter()
        control.add_consumer(CHAT_QUEUE, destination=nodes, reply=True, timeout=10)
        finished = stack.wait_terminal(job_ids, timeout=120 + 10 * jobs, poll_s=0.02)
        elapsed = finished - started
        cpu_ms = cpu.per_job_ms(jobs)
        per_worker = [_jobs_counted(port) for port in ports]
        counted = sum(per_worker) - warm
    finally:
        control.app.close()
        for worker in fleet:
            worker.terminate()
        for worker in fleet:
            worker.wait(timeout=60)
    figures = _ground_truth(stack, job_ids)
    broker = stack.redis()
    left = broker.llen("chat") + broker.llen("reports") + broker.hlen("unacked")
    return {"workers": workers, "jobs": jobs, "seconds": round(elapsed, 2),
            "jobs_per_s": round(jobs / elapsed, 3), "jobs_per_worker": per_worker,
            "warm_up_jobs": warm, "counted_by_workers": counted,
            "left_in_broker": left, "cpu_ms_per_job": cpu_ms,
            "load_average_1m": round(os.getloadavg()[0], 2), **figures}


class _CpuSpan:
    """CPU seconds spent from construction to ``per_job_ms()``: the workers and the
    offline model (this run's own processes), this driver, and MariaDB and Redis
    (machine-wide: other users of the machine count too)."""

    def __init__(self, stack: Stack, fleet: list[WorkerProcess]):
        self.stack, self.fleet = stack, fleet
        self.before = self._sample()

    def _sample(self) -> dict[str, float]:
        return {"workers": sum(_stat(w.pid).get("cpu", 0.0) for w in self.fleet),
                "offline model": self.stack.fake_llm_process.cpu_seconds(),
                "driver": self_cpu_seconds(),
                "mariadb": cpu_of_command("mariadbd"), "redis": cpu_of_command("redis-server")}

    def per_job_ms(self, jobs: int) -> dict[str, float]:
        after = self._sample()
        return {name: round((after[name] - self.before[name]) * 1000 / jobs, 1)
                for name in after}


def _jobs_counted(port: int) -> float:
    """Jobs this worker process says it finished (its own /metrics port)."""
    text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
    return sum(s.value for family in text_string_to_metric_families(text)
               for s in family.samples if s.name == "sunrise_jobs_finished_total")


def _ground_truth(stack: Stack, job_ids: list[str]) -> dict:
    with session_scope(stack.settings.database_url) as s:
        rows = s.execute(select(Job.status, Job.attempt, Job.created_at, Job.started_at,
                                Job.finished_at).where(Job.id.in_(job_ids))).all()
        answers = s.scalar(select(func.count()).select_from(Message).where(
            Message.job_id.in_(job_ids), Message.role == "assistant"))
        calls = s.scalar(select(func.count()).select_from(LlmCall).where(
            LlmCall.job_id.in_(job_ids)))
    done = [r for r in rows if r.status == "succeeded"]
    total = [(r.finished_at - r.created_at).total_seconds() for r in done]
    wait = [(r.started_at - r.created_at).total_seconds() for r in done]
    return {
        "succeeded": len(done),
        "lost": len(job_ids) - len(done),
        "not_first_attempt": sum(1 for r in rows if r.attempt != 1),
        "answers": answers,
        "llm_calls_per_job": round(calls / max(1, len(job_ids)), 2),
        "latency_p50_s": round(statistics.median(total), 2) if total else None,
        "latency_p95_s": round(percentile(total, 95), 2) if total else None,
        "queue_wait_p50_s": round(statistics.median(wait), 2) if wait else None,
    }


def markdown(outcome: dict) -> str:
    """The BENCHMARKS.md table of one run."""
    header = ("| workers | jobs | seconds | jobs/s | × 1 worker | jobs per worker incl. warm-up "
              "(their /metrics) | p50 / p95 latency | worker CPU ms/job "
              "| lost · retried · left in broker |")
    lines = [header, "|---|---|---|---|---|---|---|---|---|"]
    base = outcome["details"]["rounds"][0]["jobs_per_s"]
    for r in outcome["details"]["rounds"]:
        lines.append(
            f"| {r['workers']} | {r['jobs']} | {r['seconds']} | {r['jobs_per_s']:.2f} "
            f"| {r['jobs_per_s'] / base:.2f} | {', '.join(f'{n:.0f}' for n in r['jobs_per_worker'])} "
            f"| {r['latency_p50_s']} s / {r['latency_p95_s']} s "
            f"| {r['cpu_ms_per_job']['workers']} "
            f"| {r['lost']} · {r['not_first_attempt']} · {r['left_in_broker']} |")
    return "\n".join(lines)


if __name__ == "__main__":
    outcome = run(smoke="--smoke" in sys.argv[1:])
    print(json.dumps(outcome, indent=2, default=str))
    print(markdown(outcome))
