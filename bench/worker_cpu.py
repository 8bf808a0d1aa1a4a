"""The worker's CPU per job without Celery: a ``JobRunner`` loop in this process.

For A/B work on the job's own code (stream reading, writes, events): the offline
model runs in its own process at 0 ms, MariaDB and Redis are real, and the jobs are
the figures' job (2 model rounds, 1 query). CPU is this process's plus its SQL
processes', per job (the offline model's own CPU apart); with ``--profile``
cProfile's heaviest functions follow.

    python -m bench.worker_cpu [--jobs 200] [--threads 8] [--rounds 3] [--profile]
                               [--latency-ms 0]

With ``--threads 200 --latency-ms 1000`` the jobs wait on the model as in figure 2
(conversations per worker), so the cost of many threads in one process shows.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from bench.figures import QUESTION
from bench.stack import Stack, children_cpu_seconds
from shared.db import session_scope
from shared.events import EventLog
from shared.job_state import create_job
from shared.keys import get_or_create_tenant
from shared.redis_client import redis_for


def run(jobs: int, threads: int, rounds: int, profile: bool, latency_ms: int = 0) -> None:
    from worker.jobs.runner import JobRunner

    with Stack("worker-cpu") as stack:
        stack.start_fake_llm(latency_ms=latency_ms)
        settings = stack.settings
        events = EventLog(redis_for(settings.redis_url))
        runner = JobRunner(settings, events=events)
        _run(runner, _create(settings, 8), threads)  # warm-up: pools, DuckDB, SDK client
        model = stack.fake_llm_process
        for _ in range(rounds):
            ids = _create(settings, jobs)  # the API's work, not the worker's: not measured
            before = _cpu(model)
            started = time.perf_counter()
            _run(runner, ids, threads)
            own, sql, llm = ((a - b) * 1000 / jobs for a, b in zip(_cpu(model), before))
            print(f"{own + sql:.2f} ms CPU per job (this process {own:.2f}, its SQL processes "
                  f"{sql:.2f}; offline model {llm:.2f}), "
                  f"{jobs / (time.perf_counter() - started):.1f} jobs/s")
        if profile:
            print(_profiled(runner, settings, jobs, threads))


def _profiled(runner, settings, jobs: int, threads: int) -> str:
    """cProfile of every job thread (one profiler each: a profiler sees one thread)."""
    profilers: list[cProfile.Profile] = []
    local = threading.local()

    def run_profiled(job_id: str) -> str | None:
        if not hasattr(local, "profiler"):
            local.profiler = cProfile.Profile(time.thread_time)  # CPU, not waiting
            profilers.append(local.profiler)
        local.profiler.enable()
        try:
            return runner.run(job_id)
        finally:
            local.profiler.disable()

    _run(runner, _create(settings, jobs), threads, run=run_profiled)
    out = io.StringIO()
    stats = pstats.Stats(*profilers, stream=out)
    # One file per run unless named: two runs at once (A/B trees) must not overwrite
    # each other's profile.
    path = os.environ.get("WORKER_CPU_PSTATS", f"/tmp/worker_cpu.{os.getpid()}.pstats")
    stats.dump_stats(path)
    print(f"profile written to {path}", file=out)
    stats.sort_stats("tottime").print_stats(40)
    stats.sort_stats("cumulative").print_stats("sunrise|worker|shared", 40)
    return out.getvalue()


def _cpu(model) -> tuple[float, float, float]:
    """CPU seconds of this process, of its SQL processes and of the offline model (also a
    child of this process, so counted apart)."""
    times = os.times()
    llm = model.cpu_seconds()
    return times.user + times.system, children_cpu_seconds(os.getpid()) - llm, llm


def _create(settings, count: int) -> list[str]:
    """``count`` queued jobs of the figures' question, as the API would leave them."""
    with session_scope(settings.database_url) as s:
        tenant = get_or_create_tenant(s, "bench-worker-cpu")
        return [create_job(s, tenant_id=tenant.id, conversation_id=None, message=QUESTION,
                           model=settings.model)["id"] for _ in range(count)]


def _run(runner, ids: list[str], threads: int, run=None) -> None:
    with ThreadPoolExecutor(threads) as pool:
        statuses = list(pool.map(run or runner.run, ids))
    if set(statuses) != {"succeeded"}:
        raise RuntimeError(f"jobs ended {sorted(set(map(str, statuses)))}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--latency-ms", type=int, default=0, help="the offline model's")
    args = parser.parse_args()
    run(args.jobs, args.threads, args.rounds, args.profile, args.latency_ms)
