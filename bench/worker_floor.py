"""The libraries' floor under a job's worker CPU: what the calls a job cannot avoid
cost when made bare, one kind at a time, in this process (one thread, none of our code
around them).

The figures' job (2 model rounds, 1 query) must at least:

- send its 2 Messages requests and read their streams: the SDK builds and sends each
  request (httpx), the bytes are read and each event's JSON parsed (jiter). The
  requests are the very bodies a worker sent for the job, taken from the offline
  model's request log, so their size is the real one;
- run its query in DuckDB and fetch the rows a tool result shows (26: 25 and one to
  tell there are more);
- read the conversation's prior turns (1 query) and commit 4 transactions of one
  statement each to MariaDB through the pymysql driver, as ``worker/jobs/store.py``
  does: the claim (with the history), round 1's billed call row before its tool runs,
  the round boundary (the tool row and the cancel flag), the answer with the last
  call's row;
- publish 3 batches of events to Redis (started, the tool call, the end);
- be received and acknowledged by Celery: that is not measured here but in the same
  run by a no-op worker (its CPU per task): figure 1's, or figure 2's at its concurrency.

Their sum is the floor of a job's worker CPU in any design on these libraries; the
worker's measured CPU per job above it is the cost of our own code and of how we
call them. A call made more often than the list says counts as ours. The same calls
made by 200 threads of one process against a 1 s model (figure 2's conditions) are
``bench/conversations_floor.py``'s.

    python -m bench.worker_floor
"""
from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable

import anthropic
import duckdb
import httpx
import jiter
import pymysql
from sqlalchemy.engine import make_url

from bench.figures import QUESTION
from bench.stack import Stack
from shared.db import session_scope
from shared.job_state import create_job
from shared.keys import get_or_create_tenant

REPEATS = 200
SHOWN_ROWS = 26  # a tool result's 25 rows, and one to tell there are more
PER_JOB = {"model call": 2, "query": 1, "database read": 1, "database commit": 4,
           "event publish": 3}


def measure(stack: Stack, repeats: int = REPEATS) -> dict[str, float]:
    """CPU milliseconds of one call of each kind (``PER_JOB`` says how many a job
    needs), measured on ``stack`` (its offline model must be running)."""
    bodies = job_requests(stack)
    costs = {"model call": _model_call_ms(stack, bodies, max(20, repeats // 4)),
             "query": query_ms(stack, query_of(bodies[-1]), repeats)}
    costs.update(_database_ms(stack, repeats))
    costs["event publish"] = _publish_ms(stack, repeats)
    return costs


def floor_ms(costs: dict[str, float], celery_task_ms: float) -> float:
    """A job's floor: each kind of call as often as a job needs it, plus Celery's own
    receive-and-acknowledge of its task."""
    return sum(costs[kind] * count for kind, count in PER_JOB.items()) + celery_task_ms


def _cpu_ms_per_call(call: Callable[[], object], repeats: int) -> float:
    """The least disturbed of three batches, in CPU ms per call of this whole process
    (DuckDB's threads included; nothing else runs in it meanwhile), after two warm-up
    calls: connections, caches."""
    call(), call()
    batches = []
    for _ in range(3):
        started = time.process_time()
        for _ in range(repeats):
            call()
        batches.append((time.process_time() - started) * 1000 / repeats)
    return min(batches)


def job_requests(stack: Stack) -> list[dict]:
    """The Messages request bodies one real job sent (run here, by a ``JobRunner``)."""
    from worker.jobs.runner import JobRunner

    base_url = stack.settings.anthropic_base_url
    since = httpx.get(f"{base_url}/_control/log").json()["entries"]
    seq = since[-1]["seq"] if since else 0
    with session_scope(stack.settings.database_url) as s:
        tenant = get_or_create_tenant(s, "bench-worker-floor")
        job_id = create_job(s, tenant_id=tenant.id, conversation_id=None, message=QUESTION,
                            model=stack.settings.model)["id"]
    status = JobRunner(stack.settings).run(job_id)
    if status != "succeeded":
        raise RuntimeError(f"the floor's sample job ended {status}")
    entries = httpx.get(f"{base_url}/_control/log", params={"since": seq}).json()["entries"]
    bodies = [e["body"] for e in entries if e["path"] == "/v1/messages"]
    if len(bodies) != PER_JOB["model call"]:
        raise RuntimeError(f"the sample job made {len(bodies)} model calls, not 2")
    return bodies


def query_of(body: dict) -> str:
    """The SQL of the job's tool call, from the second request's history."""
    for message in body["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_use":
                return block["input"]["sql"]
    raise RuntimeError("the second request carries no tool call")


def sdk_client(stack: Stack) -> anthropic.Anthropic:
    """A plain SDK client (its default connection pool) on ``stack``'s offline model."""
    return anthropic.Anthropic(api_key="sunrise-offline",
                               base_url=stack.settings.anthropic_base_url)


def request_params(bodies: list[dict]) -> list[dict]:
    """The request bodies as SDK keyword arguments (the stream flag is the caller's)."""
    return [{k: v for k, v in body.items() if k != "stream"} for body in bodies]


def read_stream_bare(client: anthropic.Anthropic, params: dict) -> None:
    """One streamed Messages call, read the cheapest way the SDK supports: its raw
    response's lines, each event's JSON parsed by jiter; no event objects built."""
    with client.messages.with_streaming_response.create(**params, stream=True) as response:
        for line in response.http_response.iter_lines():
            if line.startswith("data:"):
                jiter.from_json(line[5:].encode())


def _model_call_ms(stack: Stack, bodies: list[dict], repeats: int) -> float:
    client = sdk_client(stack)
    params = request_params(bodies)

    def call_all() -> None:
        for p in params:
            read_stream_bare(client, p)

    try:
        return _cpu_ms_per_call(call_all, repeats) / len(params)
    finally:
        client.close()


def query_ms(stack: Stack, sql: str, repeats: int) -> float:
    """CPU ms of running ``sql`` in DuckDB and fetching the rows a tool result shows."""
    con = duckdb.connect(stack.settings.duckdb_path, read_only=True)
    try:
        return _cpu_ms_per_call(lambda: con.execute(sql).fetchmany(SHOWN_ROWS), repeats)
    finally:
        con.close()


def _database_ms(stack: Stack, repeats: int) -> dict[str, float]:
    with ScratchTable(stack) as table:
        conn = table.connect()
        try:
            return {"database commit": _cpu_ms_per_call(lambda: table.commit(conn), repeats),
                    "database read": _cpu_ms_per_call(lambda: table.read(conn), repeats)}
        finally:
            conn.close()


class ScratchTable:
    """A table of its own in ``stack``'s MariaDB database for bare PyMySQL statements,
    the size of a job's billed row; dropped on exit."""

    def __init__(self, stack: Stack):
        url = make_url(stack.settings.database_url)
        self._connect_args = {"host": url.host or "127.0.0.1", "port": url.port or 3306,
                              "user": url.username or "root", "password": url.password or "",
                              "database": url.database, "autocommit": False}
        self.name = f"bench_floor_{uuid.uuid4().hex[:8]}"
        self._payload = json.dumps({"input_tokens": 2174, "output_tokens": 96, "model": "m"})
        self._job = str(uuid.uuid4())

    def connect(self) -> pymysql.Connection:
        """A new driver connection (the caller closes it)."""
        return pymysql.connect(**self._connect_args)

    def commit(self, conn: pymysql.Connection) -> None:
        """One transaction of one INSERT."""
        with conn.cursor() as cur:
            cur.execute(f"INSERT INTO {self.name} (job, payload) VALUES (%s, %s)",
                        (self._job, self._payload))
        conn.commit()

    def read(self, conn: pymysql.Connection) -> None:
        """One indexed SELECT of up to 20 rows, fetched."""
        with conn.cursor() as cur:
            cur.execute(f"SELECT id, payload FROM {self.name} WHERE job = %s "
                        "ORDER BY id LIMIT 20", (self._job,))
            cur.fetchall()

    def __enter__(self) -> ScratchTable:
        conn = self.connect()
        try:
            with conn.cursor() as cur:
                cur.execute(f"CREATE TABLE {self.name} (id BIGINT AUTO_INCREMENT PRIMARY KEY, "
                            "job CHAR(36) NOT NULL, payload TEXT NOT NULL, KEY (job))")
        finally:
            conn.close()
        return self

    def __exit__(self, *exc: object) -> None:
        conn = self.connect()
        try:
            with conn.cursor() as cur:
                cur.execute(f"DROP TABLE IF EXISTS {self.name}")
        finally:
            conn.close()


def _publish_ms(stack: Stack, repeats: int) -> float:
    client = stack.redis()
    key = f"sunrise:bench:floor:{uuid.uuid4().hex}"
    try:
        return _cpu_ms_per_call(lambda: publish(client, key), repeats)
    finally:
        client.delete(key)


def publish(client, key: str) -> None:
    """One event appended to the stream ``key``, as the worker's publishes are."""
    client.xadd(key, {"event": "llm_call", "data": _EVENT}, maxlen=1000, approximate=True)


_EVENT = json.dumps({"job_id": "0" * 36, "status": "running", "round": 1})


if __name__ == "__main__":
    with Stack("worker-floor") as bench_stack:
        bench_stack.start_fake_llm(latency_ms=0)
        measured = measure(bench_stack)
    for kind, ms in measured.items():
        print(f"{kind:16} {ms:7.3f} ms × {PER_JOB[kind]}")
    print(f"floor without Celery: {floor_ms(measured, 0.0):.2f} ms per job")
