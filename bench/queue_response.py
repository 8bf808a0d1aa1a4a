"""Figure: how the queue answers a step in load, so the autoscaler's thresholds come from data.

One private stack (bench/stack.py), the offline model at 2 s per call and worker
processes of 16 threads: a job makes 2 calls, so one worker finishes at most 4 jobs/s
(its *capacity* below), few enough for this 2-core machine, with enough threads that
"¾ of the threads" means something. The load is an open loop of submits through the API code: half
a worker's capacity for 20 s, 1.5× for 40 s, then half again until the queue is empty.
Every 0.5 s the driver scrapes the API's /metrics, the figures Prometheus and KEDA see:
``sunrise_queue_depth{queue="chat"}`` (the list KEDA's backlog trigger reads),
``sunrise_queue_unacked`` (jobs in flight: the hash its in-flight trigger reads) and
``sunrise_oldest_queued_job_age_seconds``.

Rounds: one worker; two workers; and *autoscaled*: one worker plus the rule of
deploy/kubernetes/base/worker-autoscaling.yaml, read from that file and scaled to these
threads (desired = max(⌈in flight ÷ (¾ × threads)⌉, ⌈backlog ÷ threads⌉)), evaluated
every 2 s; a worker process is started when it asks for more, up to 3. KEDA's 15 s
polling and pod scheduling are not emulated: the reaction here is the best case plus a
worker's real start-up time, which is measured.

    python -m bench.queue_response [--smoke]
"""
from __future__ import annotations

import json
import math
import sys
import time

from bench.figures import result, row
from bench.queue_timeline import analyse, ground_truth, markdown_rounds, timeline
from bench.stack import Stack, free_port, submit
from bench.worker_fleet import WorkerProcess
from shared.config import PROJECT_ROOT
from shared.models import utcnow

QUESTION = "How many flights did each carrier fly?"
CALLS_PER_JOB = 2  # the offline model answers QUESTION with one SQL round
FULL = {"threads": 16, "latency_ms": 2000, "steady_s": 20, "step_s": 40, "settle_max_s": 90,
        "low": 0.5, "high": 1.5, "sample_s": 0.5, "scaler_every_s": 2.0, "max_workers": 3,
        "rounds": ("1 worker", "2 workers", "autoscaled")}
# A smoke run proves the machinery (tests/bench), not the figure.
SMOKE = {"threads": 2, "latency_ms": 100, "steady_s": 3, "step_s": 6, "settle_max_s": 30,
         "low": 0.5, "high": 1.5, "sample_s": 0.25, "scaler_every_s": 0.5, "max_workers": 2,
         "rounds": ("1 worker", "autoscaled")}
ROUNDS = {"1 worker": (1, False), "2 workers": (2, False), "autoscaled": (1, True)}
MANIFESTS = PROJECT_ROOT / "deploy" / "kubernetes" / "base"
WORKER_START_MAX_S = 90.0
TIMELINE_STEP_S = 2.0  # the samples are kept as the peak of each 2 s, as text


def scaling_rule() -> dict[str, float]:
    """The worker ScaledObject's targets as fractions of a worker's threads."""
    import yaml

    docs = list(yaml.safe_load_all((MANIFESTS / "worker-autoscaling.yaml").read_text()))
    (scaled,) = [d for d in docs if d["kind"] == "ScaledObject"]
    config = yaml.safe_load((MANIFESTS / "configmap.yaml").read_text())["data"]
    threads = int(config["SUNRISE_WORKER_CONCURRENCY"])
    targets = {t["metadata"]["listName"]: int(t["metadata"]["listLength"])
               for t in scaled["spec"]["triggers"]}
    return {"in_flight": targets["unacked"] / threads, "backlog": targets["chat"] / threads}


def desired_workers(sample: dict, threads: int, rule: dict[str, float]) -> int:
    """What the HPA that KEDA builds would ask for: the largest of the triggers' answers."""
    return max(1, math.ceil(sample["unacked"] / (rule["in_flight"] * threads)),
               math.ceil(sample["depth"] / (rule["backlog"] * threads)))


def run(smoke: bool = False) -> dict:
    """Every round of the plan; returns the bench result (bench.figures)."""
    plan = SMOKE if smoke else FULL
    capacity = plan["threads"] / (CALLS_PER_JOB * plan["latency_ms"] / 1000)
    rule = scaling_rule()
    rounds = []
    with Stack("queue_response", worker_metrics_port=0) as stack:
        stack.start_fake_llm(latency_ms=plan["latency_ms"])
        api, auth = stack.api_client()
        for label in plan["rounds"]:
            rounds.append(_round(stack, api, auth, plan, label, capacity, rule))
    return result("queue_response", smoke, _rows(rounds, plan, capacity), plan=plan,
                  capacity_jobs_per_s=capacity, rule=rule, rounds=rounds)


class _Worker:
    """A worker process and when it became ready (its metrics port opens on worker_ready)."""

    def __init__(self, stack: Stack, threads: int, started_s: float):
        self.port = free_port()
        self.process = WorkerProcess(stack.settings, stack.log_dir, concurrency=threads,
                                     loglevel="WARNING", SUNRISE_WORKER_METRICS_PORT=str(self.port))
        self.started_s, self.ready_s = started_s, None

    def poll_ready(self, now_s: float) -> None:
        import httpx

        if self.ready_s is None:
            try:
                httpx.get(f"http://127.0.0.1:{self.port}/metrics", timeout=0.2)
                self.ready_s = now_s
            except httpx.HTTPError:
                if self.process.proc.poll() is not None:
                    raise RuntimeError(f"worker exited:\n{self.process.log()[-3000:]}") from None


def _round(stack, api, auth, plan, label, capacity, rule) -> dict:
    initial, autoscale = ROUNDS[label]
    fleet = [_Worker(stack, plan["threads"], 0.0) for _ in range(initial)]
    try:
        for worker in fleet:
            worker.process.wait_ready(timeout=90)
            worker.ready_s = 0.0
        # One job per thread first: each process pays its one-off start outside the clock.
        warm = submit(api, auth, QUESTION, initial * plan["threads"])
        stack.wait_terminal(warm, timeout=120, poll_s=0.05)
        started_at = utcnow()
        samples, jobs, scale_events = _drive(stack, api, auth, plan, fleet, autoscale,
                                             capacity, rule)
        stack.wait_terminal(list(jobs), timeout=300, poll_s=0.05)
    finally:
        for worker in fleet:
            worker.process.terminate()
        for worker in fleet:
            worker.process.wait(timeout=90)
    truth = ground_truth(stack.settings.database_url, jobs, started_at)
    return {"label": label, "initial_workers": initial, "autoscaled": autoscale,
            "scale_events": scale_events,
            "worker_ready_s": [None if w.ready_s is None else round(w.ready_s - w.started_s, 2)
                               for w in fleet[initial:]],
            "timeline": timeline(samples, TIMELINE_STEP_S),
            **analyse(samples, truth, plan, capacity, initial)}


def _drive(stack, api, auth, plan, fleet, autoscale, capacity, rule):
    """The open loop: submits on schedule, scrapes /metrics, applies the scaling rule."""
    phases = [("steady", plan["steady_s"], plan["low"]), ("step", plan["step_s"], plan["high"]),
              ("settle", plan["settle_max_s"], plan["low"])]
    samples: list[dict] = []
    jobs: dict[str, str] = {}
    scale_events: list[dict] = []
    clock0 = time.perf_counter()
    index, phase_start = 0, 0.0
    next_submit = next_sample = next_scale = 0.0
    while index < len(phases):
        now = time.perf_counter() - clock0
        name, length, load = phases[index]
        if now >= phase_start + length or (name == "settle" and _settled(samples, phase_start)):
            index, phase_start = index + 1, phase_start + length
            continue
        while now >= next_submit:
            jobs[submit(api, auth, QUESTION)[0]] = name
            next_submit += 1 / (load * capacity)
            # Behind on submits (a loaded machine): a due sample goes first, or the
            # catching up would leave the step without samples to fit a slope to.
            now = time.perf_counter() - clock0
            if now >= next_sample:
                break
        for worker in fleet:
            worker.poll_ready(now)
        if now >= next_sample:
            samples.append({"t": round(now, 2), "phase": name, "workers": len(fleet),
                            "ready": sum(w.ready_s is not None for w in fleet), **_scrape(api)})
            next_sample += plan["sample_s"]
        if autoscale and now >= next_scale and samples:
            wanted = min(plan["max_workers"],
                         desired_workers(samples[-1], plan["threads"], rule))
            while len(fleet) < wanted:
                fleet.append(_Worker(stack, plan["threads"], now))
                scale_events.append({"t": round(now, 2), "workers": len(fleet),
                                     "in_flight": samples[-1]["unacked"],
                                     "backlog": samples[-1]["depth"]})
            next_scale += plan["scaler_every_s"]
        pending = [next_submit, next_sample] + ([next_scale] if autoscale else [])
        time.sleep(max(0.0, min(*pending, now + 0.1) - (time.perf_counter() - clock0)))
    # A worker the rule added late (or slow to start on a loaded machine) may come up
    # after the backlog is gone: its start time is still a figure worth having.
    give_up = time.perf_counter() + WORKER_START_MAX_S
    while any(w.ready_s is None for w in fleet) and time.perf_counter() < give_up:
        for worker in fleet:
            worker.poll_ready(time.perf_counter() - clock0)
        time.sleep(0.1)
    return samples, jobs, scale_events


def _settled(samples: list[dict], since: float) -> bool:
    """The backlog is gone: two samples in a row with nothing waiting, 2 s into the phase."""
    recent = [s for s in samples if s["t"] >= since + 2][-2:]
    return len(recent) == 2 and all(s["depth"] == 0 and s["age"] < 1 for s in recent)


def _scrape(api) -> dict[str, float]:
    """The deployment-wide gauges of GET /metrics (api/fleet_metrics.py)."""
    from prometheus_client.parser import text_string_to_metric_families

    found = {"depth": 0.0, "unacked": 0.0, "queued": 0.0, "running": 0.0, "age": 0.0}
    text = api.get("/metrics").get_data(as_text=True)
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == "sunrise_queue_depth" and s.labels.get("queue") == "chat":
                found["depth"] = s.value
            elif s.name == "sunrise_queue_unacked":
                found["unacked"] = s.value
            elif s.name == "sunrise_jobs":
                found[s.labels["status"]] = s.value
            elif s.name == "sunrise_oldest_queued_job_age_seconds":
                found["age"] = round(s.value, 2)
    return found


def _rows(rounds: list[dict], plan: dict, capacity: float) -> list[dict]:
    fig = "queue response"
    step = f"load {plan['low']}× → {plan['high']}× one worker's capacity ({capacity:g} jobs/s)"
    rows = []
    for r in rounds:
        if r["label"] == "1 worker":
            rows.append(row(fig, "1 worker: jobs in flight at saturation ÷ its threads",
                            f"{r['in_flight_at_saturation']:.1f} of {plan['threads']}",
                            ratio=r["in_flight_at_saturation"] / plan["threads"]))
            rows.append(row(fig, f"1 worker, {step}: backlog and oldest-queued-age growth",
                            f"{r['backlog_slope']:.2f} jobs/s · {r['age_slope']:.2f} s/s",
                            f"{r['predicted_backlog_slope']:.2f} jobs/s (arrivals − throughput)",
                            ratio=r["backlog_slope"] / max(r["predicted_backlog_slope"], 1e-9)))
        peak = (f"peak backlog {r['max_depth']:.0f} · peak age {r['max_age']:.1f} s · "
                f"queue wait p95 {r['wait_p95_s']['step']:.1f} s")
        if r["autoscaled"] and r["scale_events"]:
            first = r["scale_events"][0]
            peak += (f" · workers 1 → {r['max_workers']}, the first added at {first['t']:.1f} s "
                     f"(step at {plan['steady_s']} s) and ready {r['worker_ready_s'][0]} s later")
        rows.append(row(fig, f"{r['label']}, {step}", peak))
    lost = sum(r["lost"] + r["not_first_attempt"] for r in rounds)
    rows.append(row(fig, "jobs lost or run twice (all rounds)", str(lost), target="0",
                    passed=lost == 0))
    return rows


def markdown(outcome: dict) -> str:
    """The BENCHMARKS.md details of one run: a table per round and its timelines."""
    return markdown_rounds(outcome["details"])


if __name__ == "__main__":
    outcome = run(smoke="--smoke" in sys.argv[1:])
    print(json.dumps({k: v for k, v in outcome.items() if k != "details"}, indent=2, default=str))
    print(markdown(outcome))
