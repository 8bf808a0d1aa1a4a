"""Figure: how soon a waiting client hears that its job ended.

From the worker's commit of the terminal state to (a) an SSE subscriber receiving the
terminal event and (b) a long-poller (``GET /v1/jobs/{id}?wait=30``) getting its
answer, p50 and p99. The clock starts when the worker's finishing transaction's
COMMIT has returned, as the worker notes it (bench/commit_clock.py: the project's
worker app with one ``time.time()`` after ``JobStore.finish``). The same samples are
also timed from the job's ``finished_at``, which the worker stamps before the
transaction's statements run (the figure's clock until issue 18's sixth pass): that
clock also counts the transaction, its round trips and its commit. Worker, API and
driver run on one machine and share its clock.

One private stack (bench/stack.py): the offline model at 100 ms per call, the API
under gunicorn (gevent, one worker process) and one Celery worker. Jobs run one after
another; each is committed but held back from the broker until its ``streams`` SSE
subscribers have their ``queued`` event and its ``pollers`` long-pollers have had time
to arrive (a sample whose client connected after the commit is discarded and counted).
Waiting clients sit on the API's event hub, so the figure covers the whole path:
commit, publish, the hub's read, its hand-off, the HTTP write.

In the same run the same clients wait on the floor (bench/notify_floor.py): a bare
commit and XADD, served by a bare Flask app under the same gunicorn settings. Its two
rows say how much of the figure is ours and how much any such path costs here.

    python -m bench.completion_notify [--smoke]
"""
from __future__ import annotations

import datetime as dt
import json
import os
import sys
import uuid
from types import SimpleNamespace

from bench import commit_clock, notify_floor
from bench.figures import CpuMeter, cpu_rows, percentile, result, row
from bench.stack import Stack
from bench.waiting_clients import delays_after, wait_for_end
from shared.celery_factory import make_celery
from shared.db import session_factory, session_scope
from shared.enqueue import enqueue_jobs
from shared.events import EventLog
from shared.job_state import create_job
from shared.job_view import job_to_dict
from shared.keys import tenant_for_key
from sunrise.client import SunriseClient

QUESTION = "How many flights did each carrier fly?"
LLM_LATENCY_MS = 100
FULL = {"jobs": 40, "streams": 5, "pollers": 5}
SMOKE = {"jobs": 4, "streams": 2, "pollers": 2}


def run(smoke: bool = False) -> dict:
    """Measure commit → notification latency; returns the bench result (bench.figures)
    with ``details["figures"]`` = ``{"sse_p50_ms", "sse_p99_ms", "long_poll_p50_ms",
    "long_poll_p99_ms"}``."""
    plan = SMOKE if smoke else FULL
    samples: dict[str, list[float]] = {"sse": [], "long_poll": []}
    from_finished_at: dict[str, list[float]] = {"sse": [], "long_poll": []}
    discarded = 0
    with Stack("completion-notify", worker_metrics_port=0) as stack:
        stack.start_fake_llm(latency_ms=LLM_LATENCY_MS)
        api, base_url = stack.start_api(workers=1)
        commit_log = str(stack.log_dir / "commits.log")
        worker = stack.start_worker(concurrency=8, app="bench.commit_clock",
                                    env={commit_clock.LOG_ENV: commit_log})
        key = stack.api_key()
        celery = make_celery(stack.settings)
        try:
            with SunriseClient(base_url, key) as client:
                client.wait(client.submit(QUESTION)["job_id"], timeout=120)  # warm-up
            meter = CpuMeter({"worker": worker, "api": api,
                              "offline model": stack.fake_llm_process})
            with meter.span():
                for _ in range(plan["jobs"]):
                    (got, late), (early, _) = _one_job(stack, celery, base_url, key,
                                                       commit_log, plan["streams"],
                                                       plan["pollers"])
                    discarded += late
                    for kind, values in got.items():
                        samples[kind] += values
                        from_finished_at[kind] += early[kind]
        finally:
            celery.close()
        floor = _floor(stack, key, plan)
    figures = _figures(samples)
    early_figures = _figures(from_finished_at)
    targets = {"p50": 5.0, "p99": 25.0}  # the benchmark issue's targets, in ms
    rows = [row("4 completion notify", f"worker commit → {label}, {name}",
                f"{figures[key]:.1f} ms" if key in figures else "no sample",
                target=f"≤ {targets[name]:g} ms",
                passed=(figures[key] <= targets[name]) if key in figures else None)
            for kind, label in (("sse", "SSE subscriber has the terminal event"),
                                ("long_poll", "long-poller has its answer"))
            for name in ("p50", "p99")
            for key in (f"{kind}_{name}_ms",)]
    rows += [row("4 completion notify",
                 f"the same timed from the job's finished_at (stamped before the "
                 f"finishing transaction's statements) → {label}, p50 / p99",
                 f"{early_figures[p50]:.1f} / {early_figures[p99]:.1f} ms"
                 if p50 in early_figures else "no sample", target="report")
             for kind, label in (("sse", "SSE subscriber"), ("long_poll", "long-poller"))
             for p50, p99 in ((f"{kind}_p50_ms", f"{kind}_p99_ms"),)]
    # Each job here also serves its waiting clients (streams + pollers) through the API.
    cpu = meter.per_item_ms(plan["jobs"])
    rows += cpu_rows("4 completion notify", cpu,
                     f"job with {plan['streams'] + plan['pollers']} waiting clients")
    rows += _floor_rows(figures, floor["figures"], plan["streams"] + plan["pollers"])
    return result("completion_notify", smoke, rows, figures=figures, cpu_ms_per_job=cpu,
                  from_finished_at=early_figures, floor=floor,
                  samples={kind: len(values) for kind, values in samples.items()},
                  discarded_late_clients=discarded, llm_latency_ms=LLM_LATENCY_MS,
                  load_average_1m=round(os.getloadavg()[0], 2), **plan)


def _held_job(stack: Stack, key: str) -> str:
    """A queued job with its ``queued`` event, committed as the API does but not yet
    sent to the broker: its clients connect first."""
    settings = stack.settings
    with session_scope(settings.database_url) as s:
        tenant = tenant_for_key(s, key)
        job = create_job(s, tenant_id=tenant.id, conversation_id=None, message=QUESTION,
                         model=settings.model)
        view = job_to_dict(SimpleNamespace(**job))
    EventLog(stack.redis()).publish(view["job_id"], "queued", view)
    return view["job_id"]


def _one_job(stack: Stack, celery, base_url: str, key: str, commit_log: str, streams: int,
             pollers: int) -> tuple[tuple[dict[str, list[float]], int], ...]:
    """One job with its waiting clients; their delays (ms) after the commit, and after
    the job's ``finished_at``, each with how many clients came late."""
    job_id = _held_job(stack, key)
    arrivals = wait_for_end(base_url, key, job_id, streams, pollers, lambda: enqueue_jobs(
        celery, session_factory(stack.settings.database_url), [job_id]))
    with SunriseClient(base_url, key) as client:
        finished_at = _epoch(client.get(job_id)["finished_at"])
    committed = commit_clock.read(commit_log, job_id)
    return delays_after(arrivals, committed), delays_after(arrivals, finished_at)


def _floor(stack: Stack, key: str, plan: dict) -> dict:
    """The same waiting clients and timing against the bare floor (bench/notify_floor.py):
    its commit, XADD and gunicorn/gevent Flask app, one object after another."""
    engine = notify_floor.prepare(stack.settings.database_url)
    events = stack.redis()
    server, base_url = stack.start_gunicorn("notify-floor", "bench.notify_floor:create_app()",
                                            workers=1)

    def one(object_id: str) -> tuple[dict[str, list[float]], int]:
        notify_floor.hold(engine, events, object_id)
        committed: list[float] = []
        arrivals = wait_for_end(base_url, key, object_id, plan["streams"], plan["pollers"],
                                lambda: committed.append(
                                    notify_floor.finish(engine, events, object_id)))
        events.delete(notify_floor.stream_key(object_id))
        return delays_after(arrivals, committed[0])

    samples: dict[str, list[float]] = {"sse": [], "long_poll": []}
    discarded = 0
    try:
        one(str(uuid.uuid4()))  # warm-up: the server's imports, pools, connections
        meter = CpuMeter({"api": server})
        with meter.span():
            for _ in range(plan["jobs"]):
                got, late = one(str(uuid.uuid4()))
                discarded += late
                for kind, values in got.items():
                    samples[kind] += values
    finally:
        server.stop()
        engine.dispose()
    return {"figures": _figures(samples), "discarded_late_clients": discarded,
            "cpu_ms_per_job": meter.per_item_ms(plan["jobs"])}


def _figures(samples: dict[str, list[float]]) -> dict[str, float]:
    """p50 and p99 (ms) of each kind of client that has samples."""
    return {f"{kind}_{name}_ms": round(percentile(values, pct), 1)
            for kind, values in samples.items() if values
            for name, pct in (("p50", 50), ("p99", 99))}


def _floor_rows(ours: dict[str, float], floor: dict[str, float], clients: int) -> list[dict]:
    """One report row per kind of client: the floor's p50 / p99 beside ours; the ratio is
    ours over the floor at p50."""
    rows = []
    for kind, label in (("sse", "SSE"), ("long_poll", "long-poll")):
        p50, p99 = f"{kind}_p50_ms", f"{kind}_p99_ms"
        measured = p50 in floor and p50 in ours
        rows.append(row(
            "4 completion notify",
            f"the floor (bare commit, XADD, gunicorn/gevent Flask, {clients} waiting clients; "
            f"bench/notify_floor.py): commit → {label} client, p50 / p99",
            f"{floor[p50]:.1f} / {floor[p99]:.1f} ms" if p50 in floor else "no sample",
            f"{ours[p50]:.1f} / {ours[p99]:.1f} ms (ours)" if p50 in ours else "",
            ours[p50] / floor[p50] if measured and floor[p50] > 0 else None, "report"))
    return rows


def _epoch(stamp: str) -> float:
    return dt.datetime.fromisoformat(stamp).timestamp()


if __name__ == "__main__":
    print(json.dumps(run(smoke="--smoke" in sys.argv[1:]), indent=2, default=str))
