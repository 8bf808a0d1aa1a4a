"""A small Python client for the Sunrise HTTP API (used by the CLI and the tests)."""
from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any, NamedTuple

import httpx

TERMINAL = ("succeeded", "failed", "cancelled")


class ApiError(Exception):
    """A problem+json answer: ``status`` and the parsed ``problem`` body."""

    def __init__(self, status: int, problem: dict[str, Any]):
        super().__init__(f"{status} {problem.get('title', '')}: {problem.get('detail', '')}")
        self.status = status
        self.problem = problem


class SseEvent(NamedTuple):
    id: str | None
    event: str
    data: dict[str, Any]


class SunriseClient:
    def __init__(self, base_url: str, api_key: str | None = None, *, timeout: float = 40.0):
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.http = httpx.Client(base_url=base_url, headers=headers, timeout=timeout)

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> "SunriseClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _check(self, resp: httpx.Response) -> Any:
        if resp.status_code >= 400:
            try:
                problem = resp.json()
            except ValueError:
                problem = {"detail": resp.text}
            raise ApiError(resp.status_code, problem)
        return resp.json() if resp.content else None

    def submit(self, message: str, *, conversation_id: str | None = None,
               idempotency_key: str | None = None) -> dict[str, Any]:
        """POST /v1/jobs; returns the 202 body (job_id, conversation_id, status, links)."""
        body: dict[str, Any] = {"message": message}
        if conversation_id:
            body["conversation_id"] = conversation_id
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        return self._check(self.http.post("/v1/jobs", json=body, headers=headers))

    def get(self, job_id: str, *, wait: float = 0) -> dict[str, Any]:
        params = {"wait": wait} if wait else {}
        return self._check(self.http.get(f"/v1/jobs/{job_id}", params=params))

    def wait(self, job_id: str, *, timeout: float = 120.0) -> dict[str, Any]:
        """Long-poll until the job ends; raises TimeoutError after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            job = self.get(job_id, wait=max(0.0, min(30.0, remaining)))
            if job["status"] in TERMINAL:
                return job
            if remaining <= 0:
                raise TimeoutError(f"job {job_id} still {job['status']} after {timeout} s")

    def cancel(self, job_id: str) -> dict[str, Any]:
        return self._check(self.http.post(f"/v1/jobs/{job_id}/cancel"))

    def stream(self, job_id: str, *, last_event_id: str | None = None,
               timeout: float = 300.0) -> Iterator[SseEvent]:
        """Yield the job's events until (and including) the terminal one."""
        headers = {"Last-Event-ID": last_event_id} if last_event_id else {}
        with self.http.stream("GET", f"/v1/jobs/{job_id}/events", headers=headers,
                              timeout=httpx.Timeout(timeout, connect=5)) as resp:
            if resp.status_code >= 400:
                resp.read()
                self._check(resp)
            yield from parse_sse(resp.iter_lines())

    def ask(self, message: str, **kw) -> dict[str, Any]:
        """Submit and wait: the finished job."""
        return self.wait(self.submit(message, **kw)["job_id"])


def parse_sse(lines: Iterator[str]) -> Iterator[SseEvent]:
    """Parse SSE lines into events; stops after a terminal event."""
    event_id, name, data = None, "message", []
    for line in lines:
        if line == "":
            if data:
                ev = SseEvent(event_id, name, json.loads("\n".join(data)))
                yield ev
                if ev.event in TERMINAL:
                    return
            event_id, name, data = None, "message", []
        elif line.startswith(":"):
            continue
        else:
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "id":
                event_id = value
            elif field == "event":
                name = value
            elif field == "data":
                data.append(value)
