"""What the figures mean: the analysis written after measuring, shown under each figure
in BENCHMARKS.md. For a missed target it is the written reason that goes with the
profile; numbers quoted here are from the runs that led to it (see the table for the
current run). Edit this file, not the generated part of BENCHMARKS.md.
"""
from __future__ import annotations

FINDINGS: dict[str, str] = {
    "engine_overhead": """
**Target missed (≈ 0.05–0.06 against ≥ 0.30); reason: CPU per job, not waiting.**
A no-op Celery task costs ≈ 2 ms of CPU in all (publish + deliver + ack); a Sunrise
job costs ≈ 45–50 ms of CPU across the processes (`cpu_ms_per_job` below: worker ≈ 28,
API ≈ 9, MariaDB ≈ 6, offline model ≈ 2.5, Redis ≈ 1). On 2 shared cores that bounds
the ratio near 0.1 whatever the queueing design: the offline model answers in 0 ms,
so nothing in the job waits and the figure is pure Python CPU. The worker profile
(GIL holders) splits its share into SQLAlchemy + PyMySQL for ~9 short transactions
(claim, history, two cancel checks, two `llm_calls` rows, the `tool_calls` row, the
final write: ≈ 40 %), Celery's own work around the task (receive, ack, task events:
≈ 25 %), the SDK's two streaming calls (≈ 20 %), DuckDB (≈ 7 %) and the Redis event
publishes (≈ 5 %).

**Fixed on the way:** the worker's connection pool was `pool_size=10,
max_overflow=20`; with 64 threads every transaction past the 10th opened and closed
a PyMySQL connection, each paying a handshake and a fresh SSL context
(`ssl.load_default_certs` was 16 % of the worker's samples). `shared/db.py` now keeps
all 30 (`pool_size=30, max_overflow=0`, same maximum): worker CPU per job fell from
≈ 40–44 ms to ≈ 28–33 ms. Further gains need structural changes that are not the
benchmark's to make: a C MySQL driver (mysqlclient), folding the per-call
`llm_calls`/`tool_calls` rows into the final transaction, and a cancel flag read
from Redis instead of a SELECT per round.
""",
    "conversations_per_worker": """
**Target missed (≈ 0.22 at 200 conversations against ≥ 0.85); RSS target met
(≈ 370 MB ≤ 400 MB, ≈ 220 MB of it is the idle worker).** One worker process holds
200 and 500 conversations open without errors, lost jobs or memory growth, but it
cannot *finish* them at the latency bound: each job costs ≈ 37 ms of CPU in the
worker (same split as figure 1), and one process runs Python on one core at a time,
so it completes at most ≈ 1 / 37 ms ≈ 27 jobs/s — the measured 22–25 jobs/s — while
200 jobs in 2 s need 100 jobs/s (≤ 10 ms per job). The threads spend their time
queued for the GIL, which is why each LLM call (1 s at the model) takes 2–3 s
end to end and why 500 at once is no faster than 200. The profile (GIL holders
only) shows the CPU in the SDK's streaming calls and the ORM, as in figure 1.

What holds: memory (threads are cheap: +150 MB for 200, +160 MB for 500) and the
latency-bound arithmetic per process: a worker process should carry about
`2 s × 27 jobs/s ≈ 50` concurrent conversations at 1 s per call, and more
conversations mean more processes — figure 7 shows throughput growing linearly
with worker processes. The DB pool (30) was not the limit once it stopped churning
connections; DuckDB (one read-only connection, a cursor per query) and Redis were
not either (≈ 1 ms each per job).
""",
    "api_submit": """
**Ratio target missed (≈ 0.1–0.2 against ≥ 0.5); reason: what a submit must do.** The
baseline is one bare `apply_async` (≈ 0.8 ms of CPU). A submit is that same publish
plus authentication (SHA-256 of the key, a SELECT), the per-tenant concurrency
count, the conversation + job + message INSERTs and their commit, the
`enqueued_at` UPDATE and the `queued` event: ≈ 5.5–6.5 ms of API CPU per request
(profile below: enqueue ≈ 30 %, auth ≈ 16 %, concurrency check ≈ 10 %, the ORM
for the rest). The two gevent processes then share 2 cores with MariaDB, the load
generator and, here, other engineers' test runs, so ≈ 150–250 req/s is the ceiling,
i.e. about 0.15–0.2 of a single-threaded publish loop. Reaching 0.5 would take a
submit path of ≈ 2 ms: a Core (not ORM) insert in one transaction, a cached key →
tenant lookup, and stamping `enqueued_at` in the same transaction.

**Latency at half the max rate:** with the machine quiet, p50 ≈ 10 ms and p99
≈ 25–40 ms at 40–80 req/s. An open loop at half of a burst maximum measured on a
shared, saturated 2-core box sometimes falls behind for good when another process
takes the CPU (p99 then runs to hundreds of ms), hence three windows with the least
disturbed one counting; all three are in the details.
""",
    "completion_notify": """
Measured by `bench/completion_notify.py` (the completion-delivery issue owns it and
its analysis); included here as written, with its rows marked "report". The
benchmark issue's targets are p50 ≤ 5 ms and p99 ≤ 25 ms; the runs so far measured
p50 ≈ 9–14 ms and p99 ≈ 25–50 ms, so they are **not met** on this machine. The clock
starts at the job's `finished_at`, stamped inside the committing transaction, so
the figure includes the commit itself; the rest of the path is the worker's XADD,
the API's event-hub XREAD, the hand-off to the waiting greenlet and the HTTP write,
each hop waiting for one of two shared cores. A profile of that path belongs with
its owner's analysis.
""",
    "token_efficiency": """
**Target met.** All configurations run the same 22 questions with the same scripted
SQL and the same answers (output tokens are identical in every configuration).
What each saving does on this question mix: the 25-row cut + whole-result summary
matters most for the few large results (4,043 planes, 365 days, 224 routes), CSV
matters for every result (no repeated keys), and prompt caching turns the ≈ 1,700
tokens of tools + schema, sent twice per question, into 0.1× reads. Caching
*alone* saves little with all rows in JSON: the message breakpoint writes each big
tool result to the cache at 1.25× and the question ends before anything reads it
back; with small CSV results that write is cheap, which is why the shipped
combination (≈ 12×) beats the product of the parts.
""",
    "large_results": """
**Target met.** The sandbox fetches at most `chart_row_limit + 1` rows and has
DuckDB compute the count and the per-column summary over the whole result in one
aggregate query; the naive way materialises every row as Python tuples and loops.
Memory: the sandbox's growth is the same for 1 M and 3 M rows (only the capped
chart rows are held), while the naive way grows with the result (≈ 0.5 GB per
million rows of 11 columns).
""",
    "scaling": """
Measured by `bench/scaling.py` (the operations issue owns it); included here as written.
""",
}
