"""Would one asyncio loop make a model call cheaper than a thread per call? (issue 18)

Figure 2's worker has 200 jobs in flight, each making 2 streamed model calls of 1 s;
``bench/conversations_floor.py`` measures those calls made bare by 200 threads. Here
the same calls (worker_floor's request bodies, from a real job; read raw: the lines,
each event's JSON parsed by jiter) are made in one run, the ways alternating round by
round:

- ``1 thread`` / ``1 loop, 1 task``, at 0 ms and at 1 s: one call after another on
  the sync client / on ``anthropic.AsyncAnthropic`` (at 1 s the offline model paces a
  reply's events over the second: ~22 network reads a call instead of ~2);
- ``200 threads, 1 client``: a thread per job on one plain SDK client (the floor's
  way); ``200 threads, worker clients``: on the worker's clients
  (``worker/llm/client.py``: ``CLIENT_POOLS`` pools, sockets that keep their timeout);
- ``1 loop, 1 client`` / ``1 loop, 8 clients`` / ``1 uvloop, 8 clients``: the 200
  jobs as tasks of one event loop in one thread, read the same raw way
  (``aiter_lines`` + jiter);
- ``1 loop, 8 clients, 200 threads waiting``: 200 persistent threads (Celery's) each
  hand their job's calls to that loop one at a time (``run_coroutine_threadsafe``)
  and block on the future: a worker that keeps its thread pool.

Per model call: this process's CPU (``resource.getrusage``, the kernel's share apart)
over a round, after a warm-up round of each way; its context switches; the network
reads httpcore made (counted by wrapping its sync and async stream ``read``); the
offline model's CPU (its own process). Each round's wall time shows whether the
calls kept up (ideal: 2 x latency for the concurrent ways).

On the 2-core host of issue 18 (Dec 2026, shared, load 4-8) the loop was not
cheaper: it removes ~150 of a threaded call's ~160 context switches, but the async
stack's own cost per read is higher, so CPU per call came out the same or worse.

    python -m bench.async_model_probe [--in-flight 200] [--rounds 3] [--latency-ms 1000]
                                      [--only SUBSTRING]
"""
from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import threading
import time
from collections.abc import Callable

import anthropic
import httpx
import jiter
import uvloop
from httpcore2._backends.anyio import AnyIOStream
from httpcore2._backends.sync import SyncStream

from bench import worker_floor
from bench.stack import Stack

SEQUENTIAL_JOBS = 100


def read_stream_async(client: anthropic.AsyncAnthropic, params: dict):
    """``worker_floor.read_stream_bare`` on the async client (a coroutine)."""
    async def read() -> None:
        async with client.messages.with_streaming_response.create(
                **params, stream=True) as response:
            async for line in response.http_response.aiter_lines():
                if line.startswith("data:"):
                    jiter.from_json(line[5:].encode())
    return read()


class Loop:
    """An event loop running in a thread of its own until ``close()``."""

    def __init__(self, new_loop: Callable[[], asyncio.AbstractEventLoop]) -> None:
        self.loop = new_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()

    def run(self, coro):
        """Run ``coro`` on the loop; block the calling thread until its result."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()


class Crowd:
    """``size`` persistent threads; ``run(work)`` has each call ``work(index)`` once,
    released together, and returns when all are done (raising the first error)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._start = threading.Barrier(size + 1)
        self._done = threading.Barrier(size + 1)
        self._work: Callable[[int], object] | None = None
        self._errors: list[BaseException] = []
        for index in range(size):
            threading.Thread(target=self._serve, args=(index,), daemon=True).start()

    def _serve(self, index: int) -> None:
        while True:
            self._start.wait()
            if self._work is None:
                return
            try:
                self._work(index)
            except Exception as exc:  # re-raised in the caller's thread
                self._errors.append(exc)
            self._done.wait()

    def run(self, work: Callable[[int], object]) -> None:
        self._work, self._errors = work, []
        self._start.wait()
        self._done.wait()
        if self._errors:
            raise self._errors[0]

    def close(self) -> None:
        self._work = None
        self._start.wait()


class ReadCounter:
    """Counts the HTTP layer's network reads (httpcore's, sync and async), each one a
    receive from the socket, from now on in this process (the classes' ``read`` is
    wrapped for good; the wrapper costs well under a microsecond a read)."""

    def __init__(self) -> None:
        self.reads = 0
        for stream in (SyncStream, AnyIOStream):
            stream.read = self._counted(stream.read)

    def _counted(self, read: Callable) -> Callable:
        if asyncio.iscoroutinefunction(read):
            async def counted_async(stream, *args, **kwargs):
                self.reads += 1
                return await read(stream, *args, **kwargs)
            return counted_async

        def counted(stream, *args, **kwargs):
            self.reads += 1
            return read(stream, *args, **kwargs)
        return counted


def _usage() -> tuple[float, float, int]:
    """This process's CPU seconds (all), of them in the kernel, and context switches."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return (usage.ru_utime + usage.ru_stime, usage.ru_stime,
            usage.ru_nvcsw + usage.ru_nivcsw)


def _set_latency(stack: Stack, ms: float) -> None:
    httpx.post(f"{stack.settings.anthropic_base_url}/_control/latency",
               json={"fixed_ms": ms, "jitter_ms": 0}).raise_for_status()


def ways(stack: Stack, params: list[dict], in_flight: int, latency_ms: float,
         loops: dict[str, Loop], crowd: Crowd
         ) -> dict[str, tuple[Callable[[], None], int, float]]:
    """Each way of making the calls: a round's function, its number of calls and the
    offline model's latency for it."""
    from worker.llm.client import CLIENT_POOLS, make_client

    plain = worker_floor.sdk_client(stack)
    pools = [make_client(stack.settings, pool=n) for n in range(CLIENT_POOLS)]
    calls = in_flight * len(params)

    def sequential(jobs: int) -> Callable[[], None]:
        def run() -> None:
            for _ in range(jobs):
                for p in params:
                    worker_floor.read_stream_bare(plain, p)
        return run

    def threads(clients: list[anthropic.Anthropic]) -> Callable[[], None]:
        def job(index: int) -> None:
            for p in params:
                worker_floor.read_stream_bare(clients[index % len(clients)], p)
        return lambda: crowd.run(job)

    def awaited(loop: Loop, client: anthropic.AsyncAnthropic, jobs: int) -> Callable[[], None]:
        async def run() -> None:
            for _ in range(jobs):
                for p in params:
                    await read_stream_async(client, p)
        return lambda: loop.run(run())

    def tasks(loop: Loop, clients: list[anthropic.AsyncAnthropic]) -> Callable[[], None]:
        async def job(client: anthropic.AsyncAnthropic) -> None:
            for p in params:
                await read_stream_async(client, p)

        async def all_jobs() -> None:
            await asyncio.gather(*(job(clients[n % len(clients)]) for n in range(in_flight)))
        return lambda: loop.run(all_jobs())

    def handed(loop: Loop, clients: list[anthropic.AsyncAnthropic]) -> Callable[[], None]:
        def job(index: int) -> None:
            for p in params:
                loop.run(read_stream_async(clients[index % len(clients)], p))
        return lambda: crowd.run(job)

    asyncio_1, asyncio_8, uvloop_8 = (
        [loops[kind].run(_async_client(stack)) for _ in range(count)]
        for kind, count in (("asyncio", 1), ("asyncio", CLIENT_POOLS), ("uvloop", CLIENT_POOLS)))
    return {
        "1 thread, 0 ms": (sequential(SEQUENTIAL_JOBS), SEQUENTIAL_JOBS * len(params), 0),
        "1 thread, 1 s": (sequential(3), 3 * len(params), latency_ms),
        "1 loop, 1 task, 0 ms": (awaited(loops["asyncio"], asyncio_1[0], SEQUENTIAL_JOBS),
                                 SEQUENTIAL_JOBS * len(params), 0),
        "1 loop, 1 task, 1 s": (awaited(loops["asyncio"], asyncio_1[0], 3), 3 * len(params),
                                latency_ms),
        f"{in_flight} threads, 1 client": (threads([plain]), calls, latency_ms),
        f"{in_flight} threads, worker clients": (threads(pools), calls, latency_ms),
        "1 loop, 1 client": (tasks(loops["asyncio"], asyncio_1), calls, latency_ms),
        "1 loop, 8 clients": (tasks(loops["asyncio"], asyncio_8), calls, latency_ms),
        "1 uvloop, 8 clients": (tasks(loops["uvloop"], uvloop_8), calls, latency_ms),
        f"1 loop, 8 clients, {in_flight} threads waiting": (
            handed(loops["asyncio"], asyncio_8), calls, latency_ms),
    }


async def _async_client(stack: Stack) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(api_key="sunrise-offline",
                                    base_url=stack.settings.anthropic_base_url)


def measure(stack: Stack, run: Callable[[], None], calls: int,
            counter: ReadCounter) -> dict[str, float]:
    """One round: CPU ms per call of this process (and of it in the kernel), of the
    offline model; network reads and context switches per call; wall s."""
    model, load = stack.fake_llm_process, os.getloadavg()[0]
    model_before, reads = model.cpu_seconds(), counter.reads
    before, started = _usage(), time.perf_counter()
    run()
    wall = time.perf_counter() - started
    cpu, sys_cpu, switches = (b - a for a, b in zip(before, _usage(), strict=True))
    return {"ms": cpu * 1000 / calls, "sys ms": sys_cpu * 1000 / calls,
            "model ms": (model.cpu_seconds() - model_before) * 1000 / calls,
            "reads": (counter.reads - reads) / calls, "switches": switches / calls,
            "wall s": wall, "load": load}


def main(in_flight: int, rounds: int, latency_ms: float, only: str = "") -> None:
    with Stack("async-model-probe") as stack:
        stack.start_fake_llm(latency_ms=latency_ms)
        params = worker_floor.request_params(worker_floor.job_requests(stack))
        loops = {"asyncio": Loop(asyncio.new_event_loop), "uvloop": Loop(uvloop.new_event_loop)}
        crowd, counter = Crowd(in_flight), ReadCounter()
        try:
            table = {name: way for name, way in
                     ways(stack, params, in_flight, latency_ms, loops, crowd).items()
                     if only in name}
            seen: dict[str, list[dict]] = {name: [] for name in table}
            for round_ in range(rounds + 1):  # round 0 warms up: connections, imports
                for name, (run, calls, latency) in table.items():
                    _set_latency(stack, latency)
                    measured = measure(stack, run, calls, counter)
                    if round_:
                        seen[name].append(measured)
        finally:
            crowd.close()
            for loop in loops.values():
                loop.close()
    for name, results in seen.items():
        def median(key: str, results: list[dict] = results) -> float:
            return statistics.median(r[key] for r in results)
        print(f"{name}\n    CPU ms/call {median('ms'):5.2f} (rounds "
              + " ".join(f"{r['ms']:.2f}" for r in results)
              + f"; kernel {median('sys ms'):.2f}) | per call: reads {median('reads'):.1f},"
              f" context switches {median('switches'):.1f} | model {median('model ms'):.2f}"
              " ms/call | wall " + " ".join(f"{r['wall s']:.2f}" for r in results)
              + " s | load " + " ".join(f"{r['load']:.2f}" for r in results))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--in-flight", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latency-ms", type=float, default=1000)
    parser.add_argument("--only", default="", help="only the ways whose name contains this")
    args = parser.parse_args()
    main(args.in_flight, args.rounds, args.latency_ms, args.only)
