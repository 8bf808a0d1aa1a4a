"""The worker's end of one SQL process (``engine/sql/child.py``): start it, send it a
request, take its answer within a time limit, and kill it when it overruns or dies.

Used by ``engine/sql/sandbox.py``, which keeps a few of them. One user at a time.
"""
from __future__ import annotations

import shutil
import subprocess
from typing import Any

import duckdb

from engine.child_process import describe_exit, end_child, ran_out_of_memory, start_child

START_TIMEOUT_S = 60.0


class Overran(Exception):
    """The SQL process did not answer in time and was killed."""


class Died(Exception):
    """The SQL process ended while working; ``returncode`` says how (``child_process``)."""

    def __init__(self, message: str, returncode: int | None = None) -> None:
        super().__init__(message)
        self.returncode = returncode

    @property
    def out_of_memory(self) -> bool:
        return ran_out_of_memory(self.returncode)


class SqlProcess:
    """One running ``engine.sql.child`` and its end of the socket pair. One user at a time."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.proc, self.conn = start_child("engine.sql.child")
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
            try:
                code = self.proc.wait(5)
            except subprocess.TimeoutExpired:
                code = None
            self.kill()
            raise Died(describe_exit(code), code) from None

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
        end_child(self.proc, self.conn)
        if self.temp_dir:  # a killed process leaves its spill files behind
            shutil.rmtree(self.temp_dir, ignore_errors=True)


def reported_error(type_name: str, message: str) -> Exception:
    """The exception a SQL process reported, as its DuckDB type when it is one."""
    kind = getattr(duckdb, type_name, None)
    if isinstance(kind, type) and issubclass(kind, duckdb.Error):
        return kind(message)
    return RuntimeError(f"{type_name}: {message}")
