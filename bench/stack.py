"""A private copy of the whole system for one benchmark: its own MariaDB database, its
own Redis database number, and the processes (offline model, API, workers) it starts.

    with Stack("engine") as stack:
        stack.start_fake_llm(latency_ms=0)
        api = stack.start_api(workers=2)
        stack.start_worker(concurrency=64)
        ...

Everything binds 127.0.0.1. ``stop()`` (or leaving the ``with``) ends exactly the
processes this stack started, by pid / their own process group, then drops the
database and flushes and releases the Redis number. Settings reach the children as
``SUNRISE_*`` variables, the way a deployment configures them.
"""
from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import redis

from bench.scratch_mariadb import create_database, drop_database
from bench.worker_fleet import lease_redis_db, settings_env
from shared.celery_factory import make_celery
from shared.config import PROJECT_ROOT, VAR_DIR, Settings

logger = logging.getLogger(__name__)

SAMPLE_DUCKDB = VAR_DIR / "test-sample.duckdb"  # shared with the test suite: built once
SUNRISE = [sys.executable, "-m", "sunrise.cli.main"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url: str, timeout: float, proc: ServiceProcess | None = None) -> None:
    """Block until ``url`` answers below 500; raises RuntimeError (with the log) if not."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.exited():
            raise RuntimeError(f"{proc.name} exited early:\n{proc.log()[-3000:]}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=2).status_code < 500:
                return
        time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer within {timeout} s"
                       + (f":\n{proc.log()[-3000:]}" if proc else ""))


class ServiceProcess:
    """A child process in its own session (so its group is exactly what it spawned)."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], log_dir: Path):
        self.name = name
        self.log_path = log_dir / f"{name}.log"
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(argv, cwd=PROJECT_ROOT, env=env, stdout=self._log,
                                     stderr=subprocess.STDOUT, start_new_session=True)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def exited(self) -> bool:
        return self.proc.poll() is not None

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")

    def group_pids(self) -> list[int]:
        """This process and every live process in its group (gunicorn's workers)."""
        return [pid for pid in _all_pids() if _stat(pid).get("pgrp") == self.pid]

    def cpu_seconds(self) -> float:
        """User + system CPU of the live processes of the group."""
        return sum(_stat(pid).get("cpu", 0.0) for pid in self.group_pids())

    def peak_rss_mb(self) -> float:
        """The main process's peak resident set (VmHWM), in MB."""
        return _status_kb(self.pid, "VmHWM") / 1024

    @contextlib.contextmanager
    def memory_peak(self, interval_s: float = 0.2) -> Iterator[MemoryPeak]:
        """Sample the memory of the process and every live one it started (a worker's
        SQL processes) while the block runs; ``.mb`` is the highest sum seen.

        Proportional set size (Pss), so pages the processes share -- the DuckDB and
        Python libraries they all map -- count once, not once per process."""
        peak = MemoryPeak()
        done = threading.Event()

        def sample() -> None:
            while True:
                peak.mb = max(peak.mb, sum(_pss_kb(pid) for pid in self.group_pids()) / 1024)
                if done.wait(interval_s):
                    return

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        try:
            yield peak
        finally:
            done.set()
            sampler.join(5)

    def stop(self, timeout: float = 20.0, sig: int = signal.SIGTERM) -> None:
        """Signal the process; SIGKILL its own group if it is still there after ``timeout``."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.pid, signal.SIGKILL)
                self.proc.wait(10)
        self._log.close()


class Stack:
    """One benchmark's private database, Redis number and processes (see module doc)."""

    def __init__(self, name: str, **overrides):
        self.name = name
        self.overrides = overrides
        self.processes: list[ServiceProcess] = []
        self.log_dir = Path(tempfile.mkdtemp(prefix=f"sunrise-bench-{name}-"))
        self.settings: Settings | None = None
        self._release_redis = None
        self._database = f"sunrise_bench_{os.getpid()}_{name}"

    # -- services -------------------------------------------------------------------

    def start(self) -> Stack:
        """Create the database (migrated), lease a Redis number, make the sample DuckDB."""
        from sunrise.sample_data import build_sample_db

        redis_url, self._release_redis = lease_redis_db()
        database_url = create_database(self._database)
        self.settings = Settings(
            database_url=database_url, redis_url=redis_url,
            duckdb_path=str(build_sample_db(SAMPLE_DUCKDB)),
            anthropic_api_key="bench-offline", anthropic_base_url=None,
            # The benchmarks measure throughput, not the per-tenant guards.
            rate_limit_per_minute=1_000_000_000, question_limit_per_minute=1_000_000_000,
            max_concurrent_jobs=1_000_000_000,
            **self.overrides,
        )
        return self

    def start_fake_llm(self, latency_ms: float = 0) -> str:
        """Start ``sunrise fake-llm``; the settings now point the SDK at it."""
        port = free_port()
        proc = self._spawn("fake-llm", [*SUNRISE, "fake-llm", "--port", str(port),
                                        "--latency-ms", str(latency_ms)])
        base_url = f"http://127.0.0.1:{port}"
        wait_http(f"{base_url}/_control/health", 30, proc)
        self.settings = self.settings.model_copy(update={"anthropic_base_url": base_url})
        self.fake_llm_process = proc
        return base_url

    def start_api(self, workers: int = 2) -> tuple[ServiceProcess, str]:
        """Start ``sunrise api`` (gunicorn, gevent); returns the process and its base URL."""
        port = free_port()
        proc = self._spawn(f"api-{port}", [*SUNRISE, "api", "--port", str(port),
                                           "--workers", str(workers)])
        base_url = f"http://127.0.0.1:{port}"
        wait_http(f"{base_url}/healthz", 60, proc)
        return proc, base_url

    def start_gunicorn(self, name: str, app: str, workers: int = 2) -> tuple[ServiceProcess, str]:
        """Serve the WSGI ``app`` (a gunicorn app spec) exactly as ``sunrise api`` serves
        the API: same gunicorn settings, same worker count. Returns the process and URL."""
        port = free_port()
        proc = self._spawn(f"{name}-{port}", [
            sys.executable, "-m", "gunicorn", "--config", "python:api.gunicorn_conf",
            "--bind", f"127.0.0.1:{port}", "--workers", str(workers), app])
        base_url = f"http://127.0.0.1:{port}"
        wait_http(base_url, 60, proc)
        return proc, base_url

    def start_worker(self, concurrency: int, *, app: str = "worker.celery_app",
                     queues: str = "chat", env: dict[str, str] | None = None) -> ServiceProcess:
        """Start a Celery worker (threads pool) on ``app``, with ``env`` added to the
        stack's environment, and wait until it answers a ping."""
        node = f"bench{len(self.processes)}-{os.getpid()}@127.0.0.1"
        argv = [sys.executable, "-m", "celery", "-A", app, "worker", "--pool", "threads",
                "--concurrency", str(concurrency), "--queues", queues, "--hostname", node,
                "--loglevel", "WARNING", "--without-mingle", "--without-gossip"]
        proc = self._spawn(node.split("@")[0], argv, env)
        celery = make_celery(self.settings)
        try:
            deadline = time.monotonic() + 60
            while not celery.control.ping(destination=[node], timeout=0.5):
                if proc.exited() or time.monotonic() > deadline:
                    raise RuntimeError(f"worker {node} did not start:\n{proc.log()[-3000:]}")
        finally:
            celery.close()
        return proc

    def api_client(self) -> tuple:
        """The API app in this process (no server: the driver's own HTTP stack would be
        measured otherwise) and the Authorization header of a new key."""
        from api import create_app

        client = create_app(settings=self.settings).test_client()
        return client, {"Authorization": f"Bearer {self.api_key()}"}

    def api_key(self, tenant: str = "bench") -> str:
        from shared.db import session_scope
        from shared.keys import create_key

        with session_scope(self.settings.database_url) as s:
            return create_key(s, tenant)

    def redis(self) -> redis.Redis:
        return redis.Redis.from_url(self.settings.redis_url, decode_responses=True)

    def wait_terminal(self, job_ids: list[str], timeout: float, poll_s: float = 0.005) -> float:
        """Block until every job has written its terminal event; returns the
        ``time.perf_counter()`` at which the last one was seen. Raises TimeoutError."""
        keys = [f"sunrise:events:job:{job_id}:terminal" for job_id in job_ids]
        client = self.redis()
        deadline = time.monotonic() + timeout
        pending = keys
        while True:
            pipe = client.pipeline(transaction=False)
            for key in pending:
                pipe.exists(key)
            done = pipe.execute()
            now = time.perf_counter()
            pending = [key for key, seen in zip(pending, done, strict=True) if not seen]
            if not pending:
                return now
            if time.monotonic() > deadline:
                raise TimeoutError(f"{len(pending)} of {len(keys)} jobs not terminal "
                                   f"after {timeout} s")
            time.sleep(poll_s)

    # -- lifecycle ------------------------------------------------------------------

    def _spawn(self, name: str, argv: list[str],
               extra_env: dict[str, str] | None = None) -> ServiceProcess:
        env = {k: v for k, v in settings_env(self.settings).items()
               if not (k.startswith("ANTHROPIC_") and self.settings.anthropic_base_url is None)}
        env["PYTHONUNBUFFERED"] = "1"
        env.update(extra_env or {})
        proc = ServiceProcess(name, argv, env, self.log_dir)
        self.processes.append(proc)
        return proc

    def stop(self) -> None:
        """Stop every process started here (newest first), drop the DB, release Redis."""
        for proc in reversed(self.processes):
            try:
                proc.stop()
            except Exception:
                logger.exception("could not stop %s (pid %s)", proc.name, proc.pid)
        self.processes.clear()
        if self.settings is not None:
            drop_database(self._database)
        if self._release_redis is not None:
            self._release_redis()
            self._release_redis = None

    def __enter__(self) -> Stack:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, exc_type: type | None, *exc: object) -> None:
        self.stop()
        # The processes' logs (and raw profiles, already summarised) are kept only when
        # the bench failed: that is when someone reads them.
        if exc_type is None:
            shutil.rmtree(self.log_dir, ignore_errors=True)
        else:
            logger.warning("%s failed; its processes' logs are in %s", self.name, self.log_dir)


def submit(client, auth: dict, message: str, count: int = 1) -> list[str]:
    """POST ``count`` jobs through ``client`` (see ``Stack.api_client``); their ids.
    Raises RuntimeError on any answer but 202."""
    job_ids = []
    for _ in range(count):
        resp = client.post("/v1/jobs", json={"message": message}, headers=auth)
        if resp.status_code != 202:
            raise RuntimeError(f"submit failed: {resp.status_code} {resp.get_data(as_text=True)}")
        job_ids.append(resp.get_json()["job_id"])
    return job_ids


# -- /proc readers (Linux) ------------------------------------------------------------

_TICK = os.sysconf("SC_CLK_TCK")


def _all_pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _stat(pid: int) -> dict:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return {}
    fields = raw.rsplit(")", 1)[1].split()
    return {"ppid": int(fields[1]), "pgrp": int(fields[2]),
            "cpu": (int(fields[11]) + int(fields[12])) / _TICK}


@dataclasses.dataclass
class MemoryPeak:
    mb: float = 0.0


def _pss_kb(pid: int) -> int:
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    return 0


def _status_kb(pid: int, field: str) -> int:
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def children_cpu_seconds(parent: int) -> float:
    """CPU seconds of the live processes ``parent`` started (a worker's SQL processes)."""
    return sum(stat["cpu"] for stat in map(_stat, _all_pids()) if stat.get("ppid") == parent)


def cpu_of_command(comm: str) -> float:
    """CPU seconds of every process named ``comm`` (e.g. ``mariadbd``): read-only."""
    total = 0.0
    for pid in _all_pids():
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/comm").read_text().strip() == comm:
                total += _stat(pid).get("cpu", 0.0)
    return total
