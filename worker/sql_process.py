"""The worker's end of one SQL process (``worker/sql_child.py``): start it, send it a
request, take its answer within a time limit, and kill it when it overruns or dies.

Used by ``worker/sql_sandbox.py``, which keeps a few of them. One user at a time.
"""
from __future__ import annotations

import shutil
import socket
import subprocess
import sys
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import duckdb

START_TIMEOUT_S = 60.0
_PROJECT_ROOT = Path(__file__).resolve().parent.parent


class Overran(Exception):
    """The SQL process did not answer in time and was killed."""


class Died(Exception):
    """The SQL process ended while working."""


class SqlProcess:
    """One running ``worker.sql_child`` and its end of the socket pair. One user at a time."""

    def __init__(self, config: dict[str, Any]) -> None:
        ours, theirs = socket.socketpair()
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "worker.sql_child", str(theirs.fileno())],
                pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, cwd=_PROJECT_ROOT)
        finally:
            theirs.close()
        self.conn = Connection(ours.detach())
        self.temp_dir: str | None = None
        self.alive = True
        try:
            self.conn.send(config)
            reply = self._receive(START_TIMEOUT_S)
        except (Overran, Died) as exc:
            self.kill()
            raise RuntimeError(f"the SQL process did not start: {exc}") from None
        if reply[0] != "ready":
            self.kill()
            raise reported_error(reply[1], reply[2])
        _, self.pid, self.temp_dir = reply

    def request(self, message: tuple, *, timeout: float) -> Any:
        """Send ``message`` and return the answer's payload; raises ``Overran`` (the
        process was killed), ``Died``, or the exception the process reported."""
        try:
            self.conn.send(message)
        except OSError as exc:
            self.kill()
            raise Died(str(exc)) from None
        status, *payload = self._receive(timeout)
        if status == "ok":
            return payload[0]
        raise reported_error(*payload)

    def _receive(self, timeout: float) -> tuple:
        try:
            if not self.conn.poll(timeout):
                self.kill()
                raise Overran(f"no answer within {timeout:.1f} s")
            return self.conn.recv()
        except (EOFError, OSError):
            code = self.proc.wait(5)
            self.kill()
            raise Died(f"exit status {code}") from None

    def stop(self) -> None:
        """End an idle process, asking it first; idempotent."""
        if self.alive and self.proc.poll() is None:
            try:
                self.conn.send(("exit",))
                self.proc.wait(2)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()

    def kill(self) -> None:
        """End the process at once (it may be busy); idempotent."""
        self.alive = False
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.conn.close()
        if self.temp_dir:  # a killed process leaves its spill files behind
            shutil.rmtree(self.temp_dir, ignore_errors=True)


def reported_error(type_name: str, message: str) -> Exception:
    """The exception a SQL process reported, as its DuckDB type when it is one."""
    kind = getattr(duckdb, type_name, None)
    if isinstance(kind, type) and issubclass(kind, duckdb.Error):
        return kind(message)
    return RuntimeError(f"{type_name}: {message}")
