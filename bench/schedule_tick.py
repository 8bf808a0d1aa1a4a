"""The schedules tick (issue 36, "Measured"): with 10,000 schedules, the time and CPU to
find the due ones, through the index on ``next_run_at`` against the same query forced to
scan the table, measured alternately in the same run; and a whole tick (find, claim each
due slot in its transaction, send) per due schedule.

The schedules are spread over the next week; ``DUE`` of them are due now. The figure
that matters is the ratio scan / index (the host is shared: both sides see its load),
and that MariaDB's plan for the tick's query uses ``ix_schedules_next_run``.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import statistics
import sys
import time

from bench.figures import result, row, self_cpu_seconds

SCHEDULES, SMOKE_SCHEDULES = 10_000, 1_000
DUE = 50
ROUNDS, SMOKE_ROUNDS = 31, 5
TARGET_RATIO = 3.0  # the index must beat the scan at least this much at 10,000


class _Sent:
    """Stands in for Celery: the tick's sends are counted, not queued."""

    def __init__(self):
        self.sent = 0

    def send_task(self, *args, **kwargs):
        self.sent += 1


def _seed(url: str, count: int, now: dt.datetime) -> None:
    from sqlalchemy import insert

    from shared.db import session_factory
    from shared.models import Schedule, Tenant, new_id

    sessions = session_factory(url)
    with sessions.begin() as s:
        tenant = Tenant(name=f"bench-{os.getpid()}")
        s.add(tenant)
        s.flush()
        rows = []
        for n in range(count):
            due = n < DUE
            at = now - dt.timedelta(seconds=30) if due else \
                now + dt.timedelta(seconds=60 + (n * 604_800) // count)
            rows.append({"id": new_id(), "tenant_id": tenant.id, "user_id": None,
                         "name": f"s{n}", "spec": {"questions": ["q"], "deliver": []},
                         "cron": "* * * * *", "timezone": "UTC", "paused": False,
                         "secret": "0" * 64, "next_run_at": at, "created_at": now,
                         "updated_at": now})
        s.execute(insert(Schedule.__table__), rows)


def _rows_read(s) -> int:
    from sqlalchemy import text

    return sum(int(v) for _, v in s.execute(text("SHOW SESSION STATUS LIKE 'Handler_read%'")))


def _timed(sessions, sql, params, rounds: int) -> tuple[list[float], float, int, float]:
    """Wall times, this process's CPU, rows found, and rows MariaDB read per query."""
    walls, found = [], 0
    cpu = self_cpu_seconds()
    with sessions() as s:
        before = _rows_read(s)
        for _ in range(rounds):
            started = time.perf_counter()
            found = len(s.execute(sql, params).all())
            walls.append(time.perf_counter() - started)
        read = (_rows_read(s) - before) / rounds
    return walls, self_cpu_seconds() - cpu, found, read


def run(smoke: bool = False) -> dict:
    from sqlalchemy import text

    from bench.scratch_mariadb import create_database, drop_database
    from shared.db import session_factory
    from shared.models import utcnow
    from worker.schedules.tick import DUE as DUE_QUERY
    from worker.schedules.tick import start_due_runs

    count, rounds = (SMOKE_SCHEDULES, SMOKE_ROUNDS) if smoke else (SCHEDULES, ROUNDS)
    name = f"sunrise_bench_sched_{os.getpid()}"
    url = create_database(name)
    try:
        now = utcnow()
        _seed(url, count, now)
        sessions = session_factory(url)
        with sessions() as s:
            s.execute(text("ANALYZE TABLE schedules"))
            compiled = str(DUE_QUERY.compile(s.get_bind(), compile_kwargs={"literal_binds": False}))
            plan = s.execute(text("EXPLAIN " + compiled.replace("%(now)s", ":now")
                                  .replace("%(param_1)s", ":limit")),
                             {"now": now, "limit": 500}).mappings().all()
        key = plan[0].get("key")
        indexed = text("SELECT id, tenant_id, next_run_at, cron, timezone FROM schedules "
                       "FORCE INDEX (ix_schedules_next_run) WHERE next_run_at <= :now "
                       "ORDER BY next_run_at LIMIT 500")
        scan = text("SELECT id, tenant_id, next_run_at, cron, timezone FROM schedules "
                    "IGNORE INDEX (ix_schedules_next_run) WHERE next_run_at <= :now "
                    "ORDER BY next_run_at LIMIT 500")
        walls = {"index": [], "scan": []}
        cpu = {"index": 0.0, "scan": 0.0}
        found, read = {}, {}
        for _ in range(3):  # alternate, so both see the same load
            for side, sql in (("index", indexed), ("scan", scan)):
                w, c, n, r = _timed(sessions, sql, {"now": now}, rounds)
                walls[side] += w
                cpu[side] += c
                found[side], read[side] = n, r
        median = {k: statistics.median(v) for k, v in walls.items()}
        celery = _Sent()
        started, cpu_before = time.perf_counter(), self_cpu_seconds()
        started_runs = start_due_runs(sessions, celery, now)
        tick_s, tick_cpu = time.perf_counter() - started, self_cpu_seconds() - cpu_before
    finally:
        drop_database(name)
    delays, tick_s = slot_to_delivery(smoke)
    ratio = median["scan"] / median["index"]
    rows = [
        row("Schedules tick", f"find the due schedules among {count:,} (median of "
            f"{len(walls['index'])}; {found['index']} due)",
            f"{median['index'] * 1000:.2f} ms", f"{median['scan'] * 1000:.2f} ms (table scan)",
            ratio, f"≥ {TARGET_RATIO:g}× and the plan uses the index",
            ratio >= TARGET_RATIO and key == "ix_schedules_next_run"),
        row("Schedules tick", "rows MariaDB reads per find (Handler_read_*)",
            f"{read['index']:,.0f}", f"{read['scan']:,.0f} (table scan)",
            read["scan"] / max(1.0, read["index"]), "report"),
        row("Schedules tick", "CPU of this process per find (index; scan)",
            f"{cpu['index'] / len(walls['index']) * 1000:.2f} ms",
            f"{cpu['scan'] / len(walls['scan']) * 1000:.2f} ms"),
        row("Schedules tick", f"a whole tick: {len(started_runs)} due slots claimed and sent",
            f"{tick_s * 1000:.0f} ms ({tick_s / max(1, len(started_runs)) * 1000:.1f} ms "
            f"per slot; CPU {tick_cpu * 1000:.0f} ms)"),
    ]
    rows.append(row(
        "Schedule slot → first delivery", f"every-minute schedule, offline model at 0 ms, "
        f"beat ticking every {tick_s:g} s, mail to a real SMTP server ({len(delays)} slots)",
        " / ".join(f"{d:.2f} s" for d in delays) or "no mail arrived",
        f"{tick_s:g} s (the tick interval)", max(delays) / tick_s if delays else None,
        "report"))
    return result("schedule_tick", smoke, rows, delays_s=delays, schedules=count, due=DUE, plan_key=key,
                  median_s=median, rows_read=read, cpu_s=cpu, tick_s=tick_s, tick_cpu_s=tick_cpu,
                  sent=celery.sent)


def slot_to_delivery(smoke: bool = False) -> tuple[list[float], float]:
    """Seconds from each slot of an every-minute schedule to its mail arriving at a real
    SMTP server, with the whole system running (worker, beat ticking every second, the
    offline model at 0 ms). Returns the delays and the tick interval."""
    import email
    import email.policy

    from aiosmtpd.controller import Controller

    from bench.stack import Stack, free_port

    arrivals: list[tuple[float, object]] = []

    class Box:
        async def handle_DATA(self, server, session, envelope):
            arrivals.append((time.time(), email.message_from_bytes(
                envelope.content, policy=email.policy.default)))
            return "250 OK"

    port = free_port()
    smtp = Controller(Box(), hostname="127.0.0.1", port=port)
    smtp.start()
    tick_s = 1.0
    slots_wanted = 1 if smoke else 2
    try:
        with Stack("schedule_delay", smtp_url=f"smtp://127.0.0.1:{port}",
                   schedules_tick_s=tick_s) as stack:
            stack.start_fake_llm(latency_ms=0)
            stack.start_worker(4, queues="chat,reports,datasets")
            stack._spawn("beat", [sys.executable, "-m", "celery", "-A", "worker.celery_app",
                                  "beat", "--loglevel", "WARNING", "--schedule",
                                  str(stack.log_dir / "beat-schedule")])
            client, auth = stack.api_client()
            created = client.post("/v1/schedules", headers=auth, json={
                "name": "Bench", "questions": ["How many flights are there?"],
                "cron": "* * * * *", "timezone": "UTC",
                "deliver": [{"type": "email", "to": ["bench@example.com"]}]}).get_json()
            deadline = time.monotonic() + 75 * (slots_wanted + 1)
            while len(arrivals) < slots_wanted and time.monotonic() < deadline:
                time.sleep(0.2)
            runs = client.get(f"/v1/schedules/{created['schedule_id']}/runs?limit=10",
                              headers=auth).get_json()["runs"]
    finally:
        smtp.stop()
    slot_of = {r["run_id"]: dt.datetime.fromisoformat(r["slot"].replace("Z", "+00:00"))
               for r in runs}
    delays = [at - slot_of[msg["X-Sunrise-Run"]].timestamp() for at, msg in arrivals
              if msg["X-Sunrise-Run"] in slot_of]
    return delays, tick_s


if __name__ == "__main__":
    print(json.dumps(run(smoke="--smoke" in sys.argv[1:]), indent=2, default=str))
