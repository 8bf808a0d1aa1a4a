"""The libraries' floor under figure 2: a job's worker CPU when ONE process has N
jobs in flight (200 in the figure) and the model answers each call in 1 s.

``worker_floor`` measures each unavoidable call bare on one thread. At 200 in flight the
same calls cost one process more: the offline model streams a slow call's events over
its second, so a call arrives in many network reads instead of two, and 200 threads
hand the GIL around. Here the calls are made bare at the figure's conditions, in this
process (nothing else runs in it meanwhile), by N threads started together:

- model calls: each thread makes the job's 2 requests (worker_floor's bodies, from a
  real job) on one shared SDK client, read two ways: ``raw`` (the raw response's lines,
  each event's JSON parsed by jiter: ``worker_floor.read_stream_bare``) and
  ``messages.stream`` (the SDK's own event objects and final message). The cheaper is
  the floor;
- database commits and reads: each thread makes the job's through PyMySQL on a pool of
  ``DB_POOL`` connections (the worker's SQLAlchemy pool size; MariaDB takes 151);
- event publishes: each thread makes the job's on one shared redis-py client (a
  blocking pool of the worker's size);
- the query runs in DuckDB inside the worker's SQL processes, not among its threads:
  worker_floor's one-thread figure;
- Celery's receive and acknowledge: a no-op worker at the figure's concurrency, its
  CPU per task (measured by the caller, ``bench.conversations_per_worker``).

CPU is counted two ways: the threads' own (``time.thread_time``, summed), and the
process's over the span (``time.process_time``: also starting, waking and switching
the threads). The process's is the floor: it is what a worker process pays.
"""
from __future__ import annotations

import queue
import threading
import time
import uuid
from collections.abc import Callable

import anthropic
from redis import BlockingConnectionPool, Redis

from bench import worker_floor
from bench.stack import Stack
from shared.redis_client import POOL_SIZE as REDIS_POOL

DB_POOL = 30
MODEL_WAYS = ("raw", "messages.stream")


def measure(stack: Stack, threads: int, rounds: int = 2) -> dict:
    """CPU ms per call of each kind at ``threads`` in flight (``{"thread": {kind: ms},
    "process": {kind: ms}}``, worker_floor's kinds), and each way of reading the model
    (``"model ways"``). The least disturbed of ``rounds`` (after a warm-up) counts.
    ``stack``'s offline model must be running at the figure's latency. Raises
    RuntimeError if the sample job does not succeed with 2 model calls."""
    bodies = worker_floor.job_requests(stack)
    ways = _model_calls(stack, worker_floor.request_params(bodies), threads, rounds)
    cheapest = min(MODEL_WAYS, key=lambda way: ways[way]["process"])
    measured = {"model call": ways[cheapest], **_database(stack, threads, rounds),
                "event publish": _publishes(stack, threads, rounds)}
    query = worker_floor.query_ms(stack, worker_floor.query_of(bodies[-1]), 50)
    measured["query"] = {"thread": query, "process": query}
    return {"thread": {kind: round(ms["thread"], 3) for kind, ms in measured.items()},
            "process": {kind: round(ms["process"], 3) for kind, ms in measured.items()},
            "model ways": {way: {how: round(ms, 3) for how, ms in spent.items()}
                           for way, spent in ways.items()},
            "model floor way": cheapest}


def _model_calls(stack: Stack, params: list[dict], threads: int, rounds: int) -> dict:
    client = worker_floor.sdk_client(stack)
    try:
        return {way: _least(_concurrently(threads, _model_reader(client, params, way),
                                          len(params)), rounds) for way in MODEL_WAYS}
    finally:
        client.close()


def _database(stack: Stack, threads: int, rounds: int) -> dict:
    with worker_floor.ScratchTable(stack) as table:
        pool = _connection_pool(table, min(DB_POOL, threads))
        try:
            measured = {}
            for kind, statement in (("database commit", table.commit),
                                    ("database read", table.read)):
                count = worker_floor.PER_JOB[kind]
                measured[kind] = _least(_concurrently(threads, _pooled(pool, statement, count),
                                                      count), rounds)
            return measured
        finally:
            while not pool.empty():
                pool.get_nowait().close()


def _publishes(stack: Stack, threads: int, rounds: int) -> dict:
    # A blocking pool the size of the worker's (shared/redis_client.py), bare.
    redis = Redis(connection_pool=BlockingConnectionPool.from_url(
        stack.settings.redis_url, max_connections=REDIS_POOL, decode_responses=True))
    key = f"sunrise:bench:floor:{uuid.uuid4().hex}"
    count = worker_floor.PER_JOB["event publish"]
    try:
        return _least(_concurrently(
            threads, lambda: [worker_floor.publish(redis, key) for _ in range(count)],
            count), rounds)
    finally:
        redis.delete(key)
        redis.close()


def _model_reader(client: anthropic.Anthropic, params: list[dict], way: str) -> Callable:
    def raw() -> None:
        for p in params:
            worker_floor.read_stream_bare(client, p)

    def sdk_stream() -> None:
        for p in params:
            with client.messages.stream(**p) as stream:
                for _ in stream:
                    pass
                stream.get_final_message()

    return raw if way == "raw" else sdk_stream


def _connection_pool(table: worker_floor.ScratchTable, size: int) -> queue.Queue:
    pool: queue.Queue = queue.Queue()
    for _ in range(size):
        pool.put(table.connect())
    return pool


def _pooled(pool: queue.Queue, statement: Callable, count: int) -> Callable[[], None]:
    """``count`` transactions, each on a connection taken from ``pool`` and given back
    (as the worker checks one out per transaction)."""
    def run() -> None:
        for _ in range(count):
            conn = pool.get()
            try:
                statement(conn)
            finally:
                pool.put(conn)
    return run


def _least(measure_once: Callable[[], dict[str, float]], rounds: int) -> dict[str, float]:
    """After one warm-up (connections opened), the round of least process CPU."""
    measure_once()
    return min((measure_once() for _ in range(rounds)), key=lambda spent: spent["process"])


def _concurrently(threads: int, work: Callable[[], object], calls: int
                  ) -> Callable[[], dict[str, float]]:
    """A measurement: ``threads`` threads run ``work`` once each, released together;
    CPU ms per call (``calls`` per ``work``) of the threads and of this process.
    Raises the first error a thread met."""
    def once() -> dict[str, float]:
        start = threading.Barrier(threads + 1)
        thread_cpu, errors = [], []

        def run() -> None:
            start.wait()
            began = time.thread_time()
            try:
                work()
            except Exception as exc:  # re-raised below, in the caller's thread
                errors.append(exc)
            thread_cpu.append(time.thread_time() - began)

        workers = [threading.Thread(target=run, daemon=True) for _ in range(threads)]
        for worker in workers:
            worker.start()
        began = time.process_time()
        start.wait()
        for worker in workers:
            worker.join()
        process = time.process_time() - began
        if errors:
            raise errors[0]
        per_call = 1000 / (threads * calls)
        return {"thread": sum(thread_cpu) * per_call, "process": process * per_call}
    return once
