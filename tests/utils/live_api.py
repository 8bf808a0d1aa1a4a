"""The REAL API (gunicorn + gevent workers, ``api.gunicorn_conf``) in a subprocess.

Use it where the in-process Flask test client cannot tell the truth: many open
streams at once, real sockets, real worker classes, latency measurements::

    with LiveApi(settings) as api:
        with api.client(api_key) as client:
            client.submit("How many flights?")

The server listens on 127.0.0.1 only, on a socket this process binds (port 0) and
hands over as ``fd://N``, so there is no free-port race. The settings reach the
server as ``SUNRISE_*`` environment variables (``shared.config.Settings`` is the
only reader of the environment); every inherited ``SUNRISE_*``/``ANTHROPIC_*``
variable is dropped first so the child runs with exactly these settings. The
server's output goes to a log file (``log_text()``), quoted when startup fails.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Self

from shared.config import PROJECT_ROOT, Settings
from sunrise.client import SunriseClient
from tests.utils.waiting import wait_for_http_ok

_ALIASED = {"anthropic_api_key": "ANTHROPIC_API_KEY", "anthropic_base_url": "ANTHROPIC_BASE_URL"}


def settings_env(settings: Settings, **overrides: Any) -> dict[str, str]:
    """``settings`` (plus ``overrides`` of its fields) as the environment that rebuilds it."""
    values = {**settings.model_dump(mode="json"), **overrides}
    env: dict[str, str] = {}
    for name, value in values.items():
        if value is None:
            continue
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, dict | list):
            text = json.dumps(value)
        else:
            text = str(value)
        env[_ALIASED.get(name, f"SUNRISE_{name.upper()}")] = text
    return env


class LiveApi:
    """Start with ``start()`` or ``with``; ``stop()`` ends exactly the processes it started."""

    def __init__(self, settings: Settings, *, workers: int = 1, startup_timeout: float = 30.0,
                 gunicorn_args: tuple[str, ...] = (), **overrides: Any):
        self.settings = settings
        self.workers = workers
        self.startup_timeout = startup_timeout
        self.gunicorn_args = gunicorn_args
        self.overrides = overrides
        self.proc: subprocess.Popen | None = None
        self.port: int | None = None
        self._log_path: Path | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def client(self, api_key: str | None = None, **kw: Any) -> SunriseClient:
        return SunriseClient(self.base_url, api_key, **kw)

    def log_text(self) -> str:
        """What the server printed so far (the log file is removed by ``stop()``)."""
        if self._log_path is None or not self._log_path.exists():
            return ""
        return self._log_path.read_text(errors="replace")

    def start(self) -> Self:
        """Spawn gunicorn and wait until ``/healthz`` answers; raises RuntimeError if not."""
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("SUNRISE_", "ANTHROPIC_"))}
        env.update(settings_env(self.settings, **self.overrides), PYTHONUNBUFFERED="1")
        listener = socket.create_server(("127.0.0.1", 0), backlog=2048)
        self.port = listener.getsockname()[1]
        fd, log_name = tempfile.mkstemp(prefix=f"sunrise-api-{self.port}-", suffix=".log")
        self._log_path = Path(log_name)
        argv = [sys.executable, "-m", "gunicorn", "--config", "python:api.gunicorn_conf",
                "--bind", f"fd://{listener.fileno()}", "--workers", str(self.workers),
                # Tests stop the server with open streams; do not wait long for them.
                "--graceful-timeout", "3", *self.gunicorn_args, "api.wsgi:app"]
        with os.fdopen(fd, "wb") as log:
            self.proc = subprocess.Popen(
                argv, cwd=PROJECT_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                pass_fds=(listener.fileno(),), start_new_session=True)
        listener.close()  # the server holds its own copy
        try:
            wait_for_http_ok(f"{self.base_url}/healthz", self.proc, timeout=self.startup_timeout,
                             what="the API", log_text=self.log_text)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Quick shutdown (SIGQUIT to the gunicorn master); SIGKILL its own process group
        if it has not exited after ``timeout`` s. Idempotent."""
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGQUIT)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            # The group was created for this server (start_new_session): only its
            # master and workers are in it.
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)
        if self._log_path is not None:
            self._log_path.unlink(missing_ok=True)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
