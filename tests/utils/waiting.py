"""Bounded waiting helpers for tests."""
from __future__ import annotations

import subprocess
import time
from collections.abc import Callable

import httpx

from shared.job_state import TERMINAL


def wait_for_status(client, headers, job_id: str, *, timeout: float = 30.0,
                    statuses=TERMINAL) -> dict:
    """Long-poll the job through the API until its status is in ``statuses``."""
    deadline = time.monotonic() + timeout
    while True:
        job = client.get(f"/v1/jobs/{job_id}?wait=2", headers=headers).get_json()
        if job["status"] in statuses or time.monotonic() > deadline:
            return job


def wait_until(predicate, *, timeout: float = 20.0, interval: float = 0.05):
    """Poll ``predicate`` until it returns a truthy value; returns it (or raises)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"condition not met within {timeout} s")


def wait_for_http_ok(url: str, proc: subprocess.Popen, *, timeout: float, what: str,
                     log_text: Callable[[], str]) -> None:
    """Poll ``url`` until it answers 200 while ``proc`` (the server behind it) runs.

    Raises RuntimeError naming ``what`` and quoting the end of ``log_text()`` if the
    process exits first or ``url`` has not answered 200 within ``timeout`` s: a server
    that failed to start says why in its log, not in a connection error.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}:\n{log_text()[-3000:]}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not answer {url} within {timeout} s:\n{log_text()[-3000:]}")
