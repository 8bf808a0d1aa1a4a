"""What traces cost the worker (issue 38 §2): CPU per job with tracing on against off,
in the same run, and what the off path of the tracing hooks costs a job.

The jobs are ``bench/worker_cpu.py``'s (the figures' question: 2 model rounds, 1 query;
the offline model at 0 ms in its own process; real MariaDB, Redis, DuckDB) run by a
``JobRunner`` in this process. Rounds alternate off and on so that both see the same
host load; each "on" round ends with the batch processor flushed, so exporting its
spans (OTLP/HTTP protobuf, to a sink process that discards them) is counted. A job's
spans on: its Celery task span (made here, as the runner runs without Celery),
``invoke_agent``, two ``chat`` and one ``execute_tool``.

"Off costs nothing": the hooks' off path (every helper yields None without touching
OpenTelemetry) timed alone, per job, as a share of the job's CPU.
"""
from __future__ import annotations

import contextlib
import json
import socket
import statistics
import subprocess
import sys
import time
import timeit

from bench.figures import result, row
from bench.stack import Stack
from bench.worker_cpu import _cpu, _create, _run

JOBS, SMOKE_JOBS = 150, 12
ROUNDS, SMOKE_ROUNDS = 3, 1
THREADS = 8
TARGET_ON = 1.10  # at most 10 % more worker CPU per job with tracing on
TARGET_OFF = 0.01  # the off path under 1 % of a job's CPU: nothing measurable
SINK = """
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class Sink(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()
    def log_message(self, *a): pass
ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Sink).serve_forever()
"""


@contextlib.contextmanager
def _sink():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-c", SINK, str(port)])
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(10)


def _off_path_us_per_job(rounds: int = 20_000) -> float:
    """The off path of one job's hooks: enqueue, invoke_agent, 2 chat, 1 execute_tool."""
    from shared import tracing

    def one_job() -> None:
        with tracing.enqueue("chat", 1):
            pass
        with tracing.invoke_agent(model="m", job_id="j", conversation_id="c", tenant_id="t",
                                  question="q", figures=lambda: None) as agent:
            for _ in range(2):
                with tracing.chat("m") as span:
                    tracing.record_reply(span, None, None, "m")
            with tracing.execute_tool("execute_sql", "id") as span:
                tracing.record_tool(span, None)
            tracing.record_answer(agent, "a")

    assert not tracing.enabled()
    # CPU, not wall time: on a shared host the wall clock counts other processes' turns.
    return min(timeit.repeat(one_job, number=rounds, repeat=5, timer=time.process_time)
               ) / rounds * 1e6


def run(smoke: bool = False) -> dict:
    from shared import tracing
    from shared.events import EventLog
    from shared.redis_client import redis_for
    from worker.jobs.runner import JobRunner

    jobs, rounds = (SMOKE_JOBS, SMOKE_ROUNDS) if smoke else (JOBS, ROUNDS)
    off_us = _off_path_us_per_job()
    cpu_ms: dict[str, list[float]] = {"off": [], "on": []}
    with Stack("tracing-overhead") as stack, _sink() as endpoint:
        stack.start_fake_llm()
        settings = stack.settings
        runner = JobRunner(settings, events=EventLog(redis_for(settings.redis_url)))
        _run(runner, _create(settings, 8), THREADS)  # warm-up: pools, DuckDB, SDK client
        tracing.configure(settings.model_copy(update={"otel_exporter_otlp_endpoint": endpoint}),
                          "sunrise-worker-bench")
        provider, tracer = tracing._state["provider"], tracing._state["tracer"]

        def traced_job(job_id: str):
            with tracer.start_as_current_span("run/sunrise.run_job", kind=_consumer()):
                return runner.run(job_id)

        for _ in range(rounds):
            for mode in ("off", "on"):
                ids = _create(settings, jobs)  # the API's work: not measured
                # The switch every span helper reads (shared/tracing.py), flipped per round.
                tracing._state["tracer"] = tracer if mode == "on" else None
                before = _cpu(stack.fake_llm_process)
                _run(runner, ids, THREADS, run=traced_job if mode == "on" else None)
                if mode == "on":
                    provider.force_flush()
                own, sql, _llm = ((a - b) * 1000 / jobs
                                  for a, b in zip(_cpu(stack.fake_llm_process), before))
                cpu_ms[mode].append(own + sql)
        tracing._state["tracer"] = None
        provider.shutdown()
    off, on = (statistics.median(cpu_ms[m]) for m in ("off", "on"))
    rows = [
        row("Tracing overhead", f"worker CPU per job, tracing on (median of {rounds})",
            f"{on:.2f} ms", f"{off:.2f} ms (off, same run)", on / off,
            f"≤ {TARGET_ON:g}×", on / off <= TARGET_ON),
        row("Tracing overhead", "the tracing hooks' off path per job",
            f"{off_us:.1f} µs", f"{off:.2f} ms (a job's CPU)", off_us / 1000 / off,
            f"≤ {TARGET_OFF:.0%} of a job", off_us / 1000 / off <= TARGET_OFF),
    ]
    return result("tracing_overhead", smoke, rows, jobs=jobs, rounds=rounds, threads=THREADS,
                  cpu_ms_per_job={m: [round(v, 3) for v in vs] for m, vs in cpu_ms.items()},
                  off_path_us_per_job=round(off_us, 2))


def _consumer():
    from opentelemetry.trace import SpanKind

    return SpanKind.CONSUMER


if __name__ == "__main__":
    outcome = run(smoke="--smoke" in sys.argv[1:])
    print(json.dumps(outcome, indent=2, default=str))
