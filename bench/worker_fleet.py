"""Start and stop real Celery worker processes for benchmarks and ops tests.

Workers are started with the standard tooling (``python -m celery -A
worker.celery_app worker``), configured only through ``SUNRISE_*`` environment
variables derived from a ``Settings`` object, exactly as a deployment does. Only
processes started here are ever signalled, by their own pid.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import redis

from shared.celery_factory import make_celery
from shared.config import PROJECT_ROOT, Settings

REDIS_LEASE_PREFIX = "sunrise:test-db-lease:"
# A worker's start-up: the longest wait while it makes progress, the longest without any,
# and the window a ping's reply must arrive in (see WorkerProcess.wait_ready).
READY_WITHIN_S = 120.0
STALLED_S = 30.0
PING_REPLY_S = 1.0


def settings_env(settings: Settings, **extra: str) -> dict[str, str]:
    """The environment a child process needs to rebuild ``settings`` exactly.

    Starts from this process's environment (PATH, HOME, …) so the child runs like any
    command started from this shell; every Settings field is then set explicitly.
    """
    env = dict(os.environ)
    for name, value in settings.model_dump(mode="json").items():
        if name in ("anthropic_api_key", "anthropic_base_url"):
            if value is not None:
                env[name.upper()] = str(value)
            continue
        if value is None:
            continue
        env[f"SUNRISE_{name.upper()}"] = (json.dumps(value) if isinstance(value, (dict, list))
                                          else str(value))
    env.update(extra)
    return env


def lease_redis_db(host_url: str = "redis://127.0.0.1:6379") -> tuple[str, Callable[[], None]]:
    """A Redis database number (1-15) nobody else uses, and the function releasing it.

    Shares the lease keys of tests/conftest.py, so benchmarks and test sessions running
    at the same time never share a broker. Raises RuntimeError when all are taken.
    """
    holder = redis.Redis.from_url(f"{host_url}/0")
    for number in range(1, 16):
        lease = f"{REDIS_LEASE_PREFIX}{number}"
        if holder.set(lease, os.getpid(), nx=True, ex=4 * 3600):
            url = f"{host_url}/{number}"
            redis.Redis.from_url(url).flushdb()

            def release(url: str = url, lease: str = lease) -> None:
                redis.Redis.from_url(url).flushdb()
                holder.delete(lease)

            return url, release
    raise RuntimeError("all Redis databases 1-15 are leased")


class WorkerProcess:
    """One ``celery worker`` process (threads pool) with its log in ``log_path``."""

    def __init__(self, settings: Settings, log_dir: Path, *, concurrency: int = 4,
                 queues: str = "chat,reports", loglevel: str = "INFO", **env: str):
        self.settings = settings
        self.name = f"w{uuid.uuid4().hex[:8]}"
        self.nodename = f"{self.name}@{os.uname().nodename}"
        self.log_path = Path(log_dir) / f"{self.name}.log"
        argv = [sys.executable, "-m", "celery", "-A", "worker.celery_app", "worker",
                "--pool", "threads", "--concurrency", str(concurrency), "--queues", queues,
                "--hostname", f"{self.name}@%h", "--loglevel", loglevel, "--without-mingle",
                "--without-gossip"]
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in wait()
        self.proc = subprocess.Popen(argv, cwd=PROJECT_ROOT, env=settings_env(settings, **env),
                                     stdout=self._log, stderr=subprocess.STDOUT)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def wait_ready(self, timeout: float = READY_WITHIN_S, *,
                   stalled_s: float = STALLED_S) -> float:
        """Block until the worker answers a broadcast ping; the seconds it took.

        Start-up is about 4 CPU-seconds of imports (Celery, SQLAlchemy, the model SDK,
        DuckDB's client, OpenTelemetry; the task modules before the worker says ready),
        so its wall time is what the machine's load leaves of the CPU: 8 s at load 4 on
        2 cores, once over 60 s at load 8. The wait therefore ends at ``timeout`` only
        while the process makes progress (spends CPU time or writes its log); one that
        makes none for ``stalled_s`` is waiting for something and fails at once. Raises
        RuntimeError saying how far it got, what it cost and the load, with its log."""
        app = make_celery(self.settings)
        started = last_move = time.monotonic()
        seen = self._progress()
        try:
            while True:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"worker exited with {self.proc.returncode}:\n{self.log()}")
                # A reply later than its window is dropped: a loaded host needs a wide one.
                if app.control.ping(destination=[self.nodename], timeout=PING_REPLY_S):
                    return time.monotonic() - started
                now, progress = time.monotonic(), self._progress()
                if progress != seen:
                    seen, last_move = progress, now
                if now - started > timeout or now - last_move > stalled_s:
                    raise RuntimeError(self._not_ready(now - started, now - last_move))
        finally:
            app.close()

    def _progress(self) -> tuple[float, int]:
        """The CPU seconds the process used (all its threads) and the bytes it logged."""
        try:
            with open(f"/proc/{self.pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):  # gone, or no /proc: the log alone
            cpu = 0.0
        return cpu, self.log_path.stat().st_size

    def _not_ready(self, waited_s: float, still_s: float) -> str:
        log = self.log()
        phase = ("said it was ready but did not answer a ping" if " ready." in log
                 else "connected to the broker, not ready" if "Connected to" in log
                 else "still importing (not connected to the broker)")
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        return (f"worker {self.nodename} not ready after {waited_s:.0f} s ({still_s:.0f} s "
                f"without progress): it {phase}, used {self._progress()[0]:.1f} CPU-s; "
                f"load average {load}:\n{log[-3000:]}")

    def terminate(self) -> None:
        """SIGTERM: Celery's warm shutdown (finish the tasks in flight, then exit)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)

    def wait(self, timeout: float) -> int:
        """Wait for the exit; SIGKILL and raise TimeoutError if it takes longer."""
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
            raise TimeoutError(f"worker {self.pid} still running after {timeout} s") from None
        finally:
            self._log.close()

    def stop(self, timeout: float = 60.0) -> int:
        self.terminate()
        return self.wait(timeout)

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")
