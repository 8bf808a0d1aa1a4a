"""Real processes for fault tests: a private redis-server, Celery workers and beat.

Everything binds 127.0.0.1, every process is started here and stopped here by its own
pid, and each writes its output to a log file under the test's tmp_path so a failing
test can show what the processes said.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import redis

from shared.config import PROJECT_ROOT, Settings

# Settings fields passed to child processes under the names the SDK reads.
_SDK_NAMES = {"anthropic_api_key": "ANTHROPIC_API_KEY", "anthropic_base_url": "ANTHROPIC_BASE_URL"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def settings_env(settings: Settings) -> dict[str, str]:
    """The environment that makes a child process read exactly ``settings``.

    Inherited SUNRISE_* and ANTHROPIC_* variables are dropped first, so nothing from
    the developer's shell leaks in.
    """
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SUNRISE_", "ANTHROPIC_"))}
    for name, value in settings.model_dump().items():
        if name == "outbound_allow" and value:  # read comma-separated (NoDecode)
            env["SUNRISE_OUTBOUND_ALLOW"] = ",".join(value)
            continue
        if value is None or isinstance(value, (dict, list)):
            continue
        env[_SDK_NAMES.get(name, f"SUNRISE_{name.upper()}")] = str(value)
    env["PYTHONUNBUFFERED"] = "1"
    return env


class ChildProcess:
    """A subprocess whose output goes to ``log_path``; stopped by pid, never by name."""

    def __init__(self, argv: list[str], log_path: Path, env: dict[str, str] | None = None):
        self.argv = argv
        self.log_path = log_path
        self.env = env
        self.proc: subprocess.Popen | None = None

    def start(self) -> ChildProcess:
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(self.argv, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, env=self.env,
                                         cwd=PROJECT_ROOT)
        return self

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL: no shutdown handlers run, in-flight work is simply gone."""
        if self.alive():
            os.kill(self.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self, grace_s: float = 10.0) -> None:
        """SIGTERM (warm shutdown), then SIGKILL after ``grace_s``."""
        if not self.alive():
            return
        self.proc.terminate()
        try:
            self.proc.wait(grace_s)
        except subprocess.TimeoutExpired:
            self.kill()

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


class RedisServer(ChildProcess):
    """A throwaway redis-server (no persistence) that a test may kill and bring back."""

    def __init__(self, workdir: Path, port: int | None = None):
        self.port = port or free_port()
        super().__init__(["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
                          "--save", "", "--appendonly", "no", "--dir", str(workdir)],
                         workdir / f"redis-{self.port}.log")

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout_s: float = 10.0) -> RedisServer:
        super().start()
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                redis.Redis(port=self.port, socket_connect_timeout=0.5).ping()
                return self
            except redis.ConnectionError:
                if time.monotonic() > deadline or not self.alive():
                    raise RuntimeError(f"redis-server did not start:\n{self.log_tail()}") from None
                time.sleep(0.05)


class Launcher:
    """Starts Celery workers and beat for one test with its settings; stops them all."""

    def __init__(self, workdir: Path, settings: Settings):
        self.workdir = workdir
        self.settings = settings
        self.children: list[ChildProcess] = []

    def _start(self, name: str, argv: list[str], overrides: dict | None = None) -> ChildProcess:
        # No metrics port: test workers must not compete for one with other runs.
        quiet = {"worker_metrics_port": 0} if "worker_metrics_port" in Settings.model_fields else {}
        settings = self.settings.model_copy(update={**quiet, **(overrides or {})})
        child = ChildProcess([sys.executable, "-m", "celery", "-A", "worker.celery_app", *argv],
                             self.workdir / f"{name}.log", env=settings_env(settings))
        self.children.append(child.start())
        return child

    def worker(self, name: str, *, concurrency: int = 4, **overrides) -> ChildProcess:
        """A real ``celery worker`` (threads pool) on the chat, reports and datasets
        queues; ``overrides`` are Settings fields that differ for this process alone."""
        return self._start(name, [
            "worker", "--pool", "threads", "--concurrency", str(concurrency),
            "--queues", "chat,reports,datasets", "--hostname", f"{name}@%h", "--without-mingle",
            "--without-gossip", "--loglevel", "INFO"], overrides)

    def beat(self) -> ChildProcess:
        """Celery beat, which runs the reaper every ``reaper_interval_s``."""
        return self._start("beat", ["beat", "--loglevel", "INFO",
                                    "--schedule", str(self.workdir / "beat-schedule")])

    def logs(self) -> str:
        return "\n".join(f"--- {c.log_path.name} (pid {c.proc.pid if c.proc else '-'})\n"
                         f"{c.log_tail()}" for c in self.children)

    def stop_all(self) -> None:
        for child in reversed(self.children):
            child.stop()
