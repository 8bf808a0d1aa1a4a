"""What one round of bench/queue_response.py shows: the jobs' own timestamps, the growth
rates of backlog and queued age during the step, and the BENCHMARKS.md rendering
(a table and a text timeline per round)."""
from __future__ import annotations

import datetime as dt
import statistics

from sqlalchemy import select

from bench.figures import percentile
from shared.db import session_scope
from shared.models import Job

BARS = "▁▂▃▄▅▆▇█"
SERIES = ("depth", "age", "unacked", "workers")
PHASE_MARK = {"steady": "s", "step": "S", "settle": "·"}


def ground_truth(database_url: str, jobs: dict[str, str], started_at: dt.datetime) -> list[dict]:
    """Each job's phase, status, attempt and times in seconds from ``started_at``."""
    def since(moment: dt.datetime | None) -> float | None:
        return None if moment is None else (moment - started_at).total_seconds()

    with session_scope(database_url) as s:
        rows = s.execute(select(Job.id, Job.status, Job.attempt, Job.created_at, Job.started_at,
                                Job.finished_at).where(Job.id.in_(list(jobs)))).all()
    return [{"phase": jobs[r.id], "status": r.status, "attempt": r.attempt,
             "created_s": since(r.created_at), "started_s": since(r.started_at),
             "finished_s": since(r.finished_at)} for r in rows]


def _slope(samples: list[dict], key: str) -> float:
    if len(samples) < 3:
        return 0.0
    return statistics.linear_regression([s["t"] for s in samples], [s[key] for s in samples]).slope


def analyse(samples: list[dict], truth: list[dict], plan: dict, capacity: float,
            workers: int) -> dict:
    """The round's figures; slopes are fitted on the step after its first quarter."""
    step_start, step_end = plan["steady_s"], plan["steady_s"] + plan["step_s"]
    fit_from = step_start + plan["step_s"] / 4
    late = [s for s in samples if s["phase"] == "step" and s["t"] >= fit_from]
    steady = [s for s in samples if s["phase"] == "steady" and s["t"] >= step_start / 2]
    done = [j for j in truth if j["status"] == "succeeded"]
    finished_late = [j for j in done if fit_from <= j["finished_s"] <= step_end]
    throughput = len(finished_late) / (step_end - fit_from)
    arrivals = sum(j["phase"] == "step" for j in truth) / plan["step_s"]
    run_s = [j["finished_s"] - j["started_s"] for j in done if j["phase"] == "steady"]
    waits = {phase: [j["started_s"] - j["created_s"] for j in done if j["phase"] == phase]
             for phase in ("steady", "step", "settle")}
    last = samples[-1] if samples else {}
    drained = last.get("phase") == "settle" and last.get("depth") == 0
    return {
        "jobs": {phase: sum(j["phase"] == phase for j in truth) for phase in waits},
        "lost": sum(j["status"] != "succeeded" for j in truth),
        "not_first_attempt": sum(j["attempt"] != 1 for j in truth),
        "arrivals_step_per_s": round(arrivals, 2),
        "throughput_step_per_s": round(throughput, 2),
        "backlog_slope": round(_slope(late, "depth"), 3),
        "predicted_backlog_slope": round(max(0.0, arrivals - throughput), 3),
        "age_slope": round(_slope(late, "age"), 3),
        "predicted_age_slope": round(max(0.0, 1 - throughput / arrivals), 3) if arrivals else 0,
        "in_flight_at_saturation": statistics.median(s["unacked"] for s in late) if late else 0,
        "in_flight_steady": round(statistics.fmean(s["unacked"] for s in steady), 2)
        if steady else 0,
        "in_flight_little": round(plan["low"] * capacity * statistics.fmean(run_s), 2)
        if run_s else 0,
        "max_depth": max((s["depth"] for s in samples), default=0),
        "max_age": max((s["age"] for s in samples), default=0),
        "max_workers": max((s["workers"] for s in samples), default=workers),
        "wait_p50_s": {p: round(statistics.median(w), 2) if w else 0 for p, w in waits.items()},
        "wait_p95_s": {p: round(percentile(w, 95), 2) if w else 0 for p, w in waits.items()},
        "drained_after_step_s": round(last["t"] - step_end, 1) if drained else None,
    }


def sparkline(values: list[float]) -> str:
    top = max(values, default=0)
    if top <= 0:
        return BARS[0] * len(values)
    return "".join(BARS[min(len(BARS) - 1, int(v / top * (len(BARS) - 1) + 0.5))] for v in values)


def timeline(samples: list[dict], width_s: float) -> dict[str, str]:
    """The peak of each ``width_s`` window, one string per series (compact in JSON):
    ``phase`` one letter per window (s steady, S step, · settle), the others numbers."""
    buckets: dict[int, dict] = {}
    for s in samples:
        b = buckets.setdefault(int(s["t"] // width_s), dict.fromkeys(SERIES, 0.0))
        b["phase"] = s["phase"]
        for key in SERIES:
            b[key] = max(b[key], s[key])
    ordered = [buckets[k] for k in sorted(buckets)]
    return {"phase": "".join(PHASE_MARK[b["phase"]] for b in ordered),
            **{key: " ".join(f"{b[key]:g}" for b in ordered) for key in SERIES}}


def markdown_rounds(details: dict) -> str:
    plan = details["plan"]
    lines = ["| round | jobs steady · step · settle | in flight: steady (λ·W) · saturated "
             "| backlog growth (predicted) | age growth (predicted) | peak backlog · peak age "
             "| queue wait p50 / p95 in the step | drained after the step | workers |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in details["rounds"]:
        jobs = " · ".join(str(r["jobs"][p]) for p in ("steady", "step", "settle"))
        ready = ", ".join(f"+1 ready {s} s after start" for s in r["worker_ready_s"])
        drained = "—" if r["drained_after_step_s"] is None else f"{r['drained_after_step_s']} s"
        lines.append(
            f"| {r['label']} | {jobs} | {r['in_flight_steady']} ({r['in_flight_little']}) · "
            f"{r['in_flight_at_saturation']} | {r['backlog_slope']:.2f} "
            f"({r['predicted_backlog_slope']:.2f}) jobs/s | {r['age_slope']:.2f} "
            f"({r['predicted_age_slope']:.2f}) s/s | {r['max_depth']:.0f} · {r['max_age']:.1f} s "
            f"| {r['wait_p50_s']['step']} / {r['wait_p95_s']['step']} s | {drained} "
            f"| {r['initial_workers']} → {r['max_workers']}{'; ' + ready if ready else ''} |")
    lines += ["", "Timelines, the peak of every 2 s (each line scaled to its own peak; s: "
              f"steady {plan['steady_s']} s, S: the step, {plan['step_s']} s, ·: settling):",
              "", "```"]
    for r in details["rounds"]:
        lines.append(f"{r['label']:<12} phase     {r['timeline']['phase']}")
        for key, title in zip(SERIES, ("backlog", "age", "in flight", "workers"), strict=True):
            values = [float(v) for v in r["timeline"][key].split()]
            peak = max(values, default=0)
            lines.append(f"{'':<12} {title:<9} {sparkline(values)}  peak {peak:g}")
    lines.append("```")
    return "\n".join(lines)
