"""Figure 1, engine overhead: full-stack jobs/s ÷ bare Celery no-op tasks/s.

Full stack: questions are POSTed to the real API (gunicorn), enqueued on Redis, run
by one real worker process against the offline model at 0 ms latency (2 LLM calls
and 1 SQL per job), persisted in MariaDB, and counted done when their terminal
event is in Redis. Baseline: the same Celery configuration, the same Redis, the
same worker concurrency, running a task that does nothing. Both clocks run from the
first submit to the last completion.
"""
from __future__ import annotations

import logging
import os
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import httpx
from sqlalchemy import func, select

from bench import api_submit, worker_floor
from bench.figures import QUESTION, CpuMeter, cpu_rows, result, row
from bench.noop_worker import DONE_KEY, NOOP_TASK
from bench.profiling import Recording
from bench.stack import Stack
from shared.celery_factory import make_celery
from shared.config import Settings
from shared.db import session_scope
from shared.models import Job

logger = logging.getLogger(__name__)

TARGET = 0.25  # issue 18 (the standing 0.30 before it)
WORKER_CPU_TARGET_MS = 8.0  # 2 model rounds, 1 query, a 0 ms model
SUBMITTERS = 8
CORES = len(os.sched_getaffinity(0))
NOOP_QUEUE = "bench-noop"


def run(smoke: bool = False, profile: bool = False) -> dict:
    """Measure both rates in one stack, alternating rounds (best of each counts: the
    machine is shared, and the best round is the one least disturbed). With ``profile``
    and a missed target, py-spy the worker and API during one more full-stack pass."""
    jobs, noops, rounds = (8, 50, 1) if smoke else (200, 2000, 2)
    concurrency = Settings.model_fields["worker_concurrency"].default
    with Stack("engine") as stack:
        stack.start_fake_llm(latency_ms=0)
        noop_worker = stack.start_worker(concurrency, app="bench.noop_worker",
                                         queues=NOOP_QUEUE)
        api, base_url = stack.start_api(workers=2)
        worker = stack.start_worker(concurrency)
        key = stack.api_key()
        # Warm-ups: connections, DuckDB, caches. The jobs' is a round of the full size, as
        # the floor is measured warm: a worker's first round at 64 threads also opens its
        # pooled MariaDB, Redis and model connections and starts its second SQL process
        # (bench.worker_cpu at 64 threads: 18.5 and 17.8 ms per job in the first round, 14.3
        # and 15.0 in the next), a cost of a worker's start, not of a job.
        run_noop_tasks(stack, 20 if smoke else noops)
        _submit_and_wait(stack, base_url, key, 4 if smoke else jobs)
        noop_rates, job_rates = [], []
        meter = CpuMeter({"worker": worker, "api": api, "offline model": stack.fake_llm_process})
        noop_meter = CpuMeter({"worker": noop_worker})
        cpu_rounds, noop_task_ms = [], []
        for _ in range(rounds):
            with noop_meter.span():
                noop_rates.append(run_noop_tasks(stack, noops))
            noop_task_ms.append(noop_meter.per_item_ms(noops)["worker"])
            with meter.span():
                job_rates.append(jobs / _submit_and_wait(stack, base_url, key, jobs))
            cpu_rounds.append(meter.per_item_ms(jobs))
        noop_rate, job_rate = max(noop_rates), max(job_rates)
        ratio = job_rate / noop_rate
        statuses = _statuses(stack)
        floor_calls = worker_floor.measure(stack, 20 if smoke else worker_floor.REPEATS)
        api_floor_ms = api_submit.framework_floor(stack, [key], 1.0 if smoke else 4.0)["cpu"]["api"]
        profiles = {}
        if profile and ratio < TARGET:
            profiles = _profile(stack, base_url, key, worker, api, jobs, job_rate)
    rows = [row("1 engine overhead", "full-stack jobs/s ÷ bare Celery no-op tasks/s",
                f"{job_rate:.1f} jobs/s", f"{noop_rate:.0f} tasks/s", ratio, f"≥ {TARGET}",
                ratio >= TARGET)]
    # The least disturbed round, as for the rates; every round is in the details.
    cpu = min(cpu_rounds, key=lambda spent: spent["worker"])
    rows += cpu_rows("1 engine overhead", cpu, "job (2 model rounds, 1 query, 0 ms model)",
                     {"worker": WORKER_CPU_TARGET_MS})
    floor = worker_floor.floor_ms(floor_calls, min(noop_task_ms))
    rows.append(row("1 engine overhead", "worker CPU per job: the libraries' floor (the calls "
                    "a job cannot avoid, made bare; bench/worker_floor.py) and ours above it",
                    f"{floor:.1f} ms floor · {cpu['worker'] - floor:.1f} ms ours",
                    f"{cpu['worker']:.1f} ms (the worker)", cpu["worker"] / floor, "report"))
    bound = at_the_floors(floor, api_floor_ms, cpu["offline model"])
    rows.append(row("1 engine overhead", f"jobs/s at the floors, at most: {CORES} cores ÷ (the "
                    "worker's floor + the API's framework floor + the offline model's CPU per "
                    "job); MariaDB, Redis and the bench's clients counted as free",
                    f"{bound:.0f} jobs/s ({floor:.1f} + {api_floor_ms:.1f} + "
                    f"{cpu['offline model']:.1f} ms)", f"{noop_rate:.0f} tasks/s",
                    bound / noop_rate, "report"))
    return result("engine_overhead", smoke, rows, jobs=jobs, noop_tasks=noops,
                  worker_concurrency=concurrency, job_statuses=statuses,
                  rounds={"jobs_per_s": [round(r, 2) for r in job_rates],
                          "noop_tasks_per_s": [round(r, 1) for r in noop_rates]},
                  cpu_ms_per_job=cpu, cpu_ms_per_job_rounds=cpu_rounds,
                  floor_ms_per_call={**{k: round(v, 3) for k, v in floor_calls.items()},
                                     "celery task (no-op worker)": min(noop_task_ms)},
                  floor_calls_per_job=worker_floor.PER_JOB, floor_ms_per_job=round(floor, 2),
                  api_floor_ms_per_submit=api_floor_ms, jobs_per_s_at_the_floors=round(bound, 1),
                  profile=profiles)


def at_the_floors(worker_ms: float, api_ms: float, model_ms: float) -> float:
    """An upper bound on full-stack jobs/s on this machine's cores if the worker and the
    API each spent only their floor per job: the offline model's CPU is the test double's
    own (the same per call in every configuration), and MariaDB, Redis and the clients
    submitting are left out, so any real stack is slower. Below ``TARGET`` × the no-op
    rate, no code on these libraries meets the ratio here."""
    return CORES * 1000.0 / (worker_ms + api_ms + model_ms)


def run_noop_tasks(stack: Stack, count: int) -> float:
    """Publish ``count`` no-op tasks in a plain loop and wait until all have run;
    tasks/s. Raises TimeoutError if they have not run within 120 s."""
    client = stack.redis()
    client.delete(DONE_KEY)
    celery = make_celery(stack.settings)
    started = time.perf_counter()
    with celery.producer_or_acquire() as producer:
        for _ in range(count):
            celery.send_task(NOOP_TASK, args=[str(uuid.uuid4())], queue=NOOP_QUEUE,
                             producer=producer)
    deadline = time.monotonic() + 120
    while int(client.get(DONE_KEY) or 0) < count:
        if time.monotonic() > deadline:
            raise TimeoutError(f"no-op tasks: {client.get(DONE_KEY)} of {count} done")
        time.sleep(0.002)
    elapsed = time.perf_counter() - started
    celery.close()
    return count / elapsed


def _submit_and_wait(stack: Stack, base_url: str, key: str, count: int) -> float:
    """POST ``count`` jobs from a few client threads; seconds until the last is terminal."""
    headers = {"Authorization": f"Bearer {key}"}
    clients = [httpx.Client(base_url=base_url, headers=headers, timeout=30)
               for _ in range(SUBMITTERS)]

    def submit(i: int) -> str:
        resp = clients[i % SUBMITTERS].post("/v1/jobs", json={"message": QUESTION})
        resp.raise_for_status()
        return resp.json()["job_id"]

    started = time.perf_counter()
    with ThreadPoolExecutor(SUBMITTERS) as pool:
        job_ids = list(pool.map(submit, range(count)))
    finished = stack.wait_terminal(job_ids, timeout=60 + count)
    for client in clients:
        client.close()
    return finished - started


def _statuses(stack: Stack) -> dict[str, int]:
    with session_scope(stack.settings.database_url) as s:
        return dict(s.execute(select(Job.status, func.count()).group_by(Job.status)).all())


def _profile(stack, base_url, key, worker, api, jobs, job_rate) -> dict:
    seconds = max(3.0, jobs / job_rate)
    recordings = {
        "worker": Recording(worker.pid, stack.log_dir / "worker.pyspy", seconds, gil=True),
        "api": Recording(api.pid, stack.log_dir / "api.pyspy", seconds, gil=True),
    }
    time.sleep(1.0)  # py-spy attaches
    _submit_and_wait(stack, base_url, key, jobs)
    return {name: rec.finish() for name, rec in recordings.items()}
