"""Bounded waiting helpers for tests."""
from __future__ import annotations

import time

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
