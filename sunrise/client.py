"""A small Python client for the Sunrise HTTP API (used by the CLI, the demo and the tests).

    with SunriseClient("http://127.0.0.1:8000", api_key) as client:
        job_id = client.submit("How many flights did each carrier fly?")["job_id"]
        for event in client.stream(job_id):      # SSE, resumed after a dropped connection
            print(event.event, event.data)
        job = client.wait(job_id)                # or long-poll to the end

        dataset = client.create_dataset("sales", ["orders.csv"])   # files streamed from disk
        for event in client.dataset_events(dataset["dataset_id"]): # import progress, then
            print(event.event, event.data)                         # ready or failed
        job = client.ask("Revenue per month?", dataset_id=dataset["dataset_id"])

Every call raises ``ApiError`` for the API's problem answers and ``NotSunriseApi`` when
what answers at ``base_url`` is not a Sunrise API (``read_answer``).
"""
from __future__ import annotations

import contextlib
import functools
import json
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple, Self

import httpx

from shared.errors import PROBLEM_TYPE

TERMINAL = ("succeeded", "failed", "cancelled")
DATASET_TERMINAL = ("ready", "failed")
MAX_WAIT_S = 30.0  # the server's long-poll ceiling

# Loading the CA bundle costs ~50 ms of CPU: httpx does it for every new client, even one
# that only speaks plain HTTP. One context (thread-safe) serves every client here.
_tls_context = functools.cache(httpx.create_ssl_context)


class ApiError(Exception):
    """A problem+json answer: ``status`` and the parsed ``problem`` body."""

    def __init__(self, status: int, problem: dict[str, Any]):
        super().__init__(f"{status} {problem.get('title', '')}: {problem.get('detail', '')}")
        self.status = status
        self.problem = problem


class NotSunriseApi(Exception):
    """Something answered at the API's address, but not as a Sunrise API does: an error
    without Sunrise's problem document, or a success whose body is not JSON (another
    program on that port, or a proxy answering for a stopped API)."""

    def __init__(self, url: str, status: int, content_type: str):
        super().__init__(
            f"the server at {url} is not a Sunrise API (it answered {status} "
            f"{content_type or 'without a content type'}, without a Sunrise problem "
            f"document); check --api or SUNRISE_API_URL: another program may be listening "
            f"on that port, or a proxy answered for an API that is not running")
        self.url = url
        self.status = status


def read_answer(resp: httpx.Response) -> Any:
    """The JSON body of a Sunrise API's answer (None when empty). Raises ApiError for its
    problem document, NotSunriseApi when what answered is not a Sunrise API."""
    if resp.status_code >= 400:
        problem = _sunrise_problem(resp)
        if problem is None:
            raise _not_sunrise(resp)
        raise ApiError(resp.status_code, problem)
    if not resp.content:
        return None
    try:
        return resp.json()
    except ValueError:
        raise _not_sunrise(resp) from None


def _sunrise_problem(resp: httpx.Response) -> dict[str, Any] | None:
    """The problem document of a Sunrise error answer, or None when it has none (every
    error of the API, gunicorn's own included, carries a ``type`` under PROBLEM_TYPE)."""
    try:
        problem = resp.json()
    except ValueError:
        return None
    kind = problem.get("type") if isinstance(problem, dict) else None
    return problem if isinstance(kind, str) and kind.startswith(PROBLEM_TYPE) else None


def _not_sunrise(resp: httpx.Response) -> NotSunriseApi:
    url = resp.request.url
    return NotSunriseApi(f"{url.scheme}://{url.netloc.decode()}", resp.status_code,
                         resp.headers.get("content-type", "").split(";")[0].strip())


class SseEvent(NamedTuple):
    id: str | None
    event: str
    data: dict[str, Any]


class SunriseClient:
    """Synchronous client; one pooled HTTP connection set per instance. Not thread-safe
    for streaming; use one instance per thread."""

    def __init__(self, base_url: str, api_key: str | None = None, *, timeout: float = 40.0):
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        # The default read timeout outlasts the longest long-poll (30 s).
        self.http = httpx.Client(base_url=base_url, headers=headers, timeout=timeout,
                                 verify=_tls_context())

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _check(self, resp: httpx.Response) -> Any:
        return read_answer(resp)

    # -- jobs -------------------------------------------------------------------------

    def submit(self, message: str, *, conversation_id: str | None = None,
               dataset_id: str | None = None,
               idempotency_key: str | None = None) -> dict[str, Any]:
        """POST /v1/jobs; returns the 202 body (job_id, conversation_id, status, links).
        Without ``dataset_id`` the job asks the tenant's default dataset, else the
        built-in one.

        Raises ApiError (409 while the conversation is still answering, 429, 422, 404
        for a dataset the tenant does not have...).
        """
        body: dict[str, Any] = {"message": message}
        if conversation_id:
            body["conversation_id"] = conversation_id
        if dataset_id:
            body["dataset_id"] = dataset_id
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        return self._check(self.http.post("/v1/jobs", json=body, headers=headers))

    def get(self, job_id: str, *, wait: float = 0) -> dict[str, Any]:
        """GET /v1/jobs/{id}; with ``wait`` (0-30 s) the server long-polls for the end."""
        params = {"wait": round(wait, 3)} if wait > 0 else {}
        return self._check(self.http.get(f"/v1/jobs/{job_id}", params=params))

    def wait(self, job_id: str, *, timeout: float = 120.0) -> dict[str, Any]:
        """Long-poll until the job ends and return it; TimeoutError after ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            job = self.get(job_id, wait=max(0.0, min(MAX_WAIT_S, remaining)))
            if job["status"] in TERMINAL:
                return job
            if remaining <= 0:
                raise TimeoutError(f"job {job_id} still {job['status']} after {timeout} s")

    def cancel(self, job_id: str) -> dict[str, Any]:
        """POST /v1/jobs/{id}/cancel; raises ApiError 409 when the job already ended."""
        return self._check(self.http.post(f"/v1/jobs/{job_id}/cancel"))

    def stream(self, job_id: str, *, last_event_id: str | None = None,
               timeout: float | None = 600.0, idle_timeout: float = 60.0,
               reconnects: int = 5) -> Iterator[SseEvent]:
        """Yield the job's events after ``last_event_id`` until (and including) the
        terminal one, each exactly once.

        A dropped or silent connection (nothing, not even a heartbeat, for
        ``idle_timeout`` s) is resumed from the last event id seen, up to
        ``reconnects`` times in a row. Ends without a terminal event only when the
        server answers 204: the terminal event was at or before ``last_event_id``.
        Raises ApiError, the transport error once reconnecting gave up, or
        TimeoutError when no terminal event came within ``timeout`` s.
        """
        return self._follow(f"/v1/jobs/{job_id}/events", TERMINAL, f"job {job_id}",
                            last_event_id, timeout, idle_timeout, reconnects)

    def _follow(self, path: str, terminal: Sequence[str], what: str, after: str | None,
                timeout: float | None, idle_timeout: float,
                reconnects: int) -> Iterator[SseEvent]:
        """The event stream at ``path`` until one of ``terminal``, resumed as ``stream``
        describes."""
        deadline = None if timeout is None else time.monotonic() + timeout
        failures = 0
        while True:
            headers = {"Last-Event-ID": after} if after else {}
            try:
                with self.http.stream("GET", path, headers=headers,
                                      timeout=httpx.Timeout(idle_timeout, connect=5)) as resp:
                    if resp.status_code == 204:
                        return
                    if resp.status_code >= 400:
                        resp.read()
                        self._check(resp)
                    if not resp.headers.get("content-type", "").startswith("text/event-stream"):
                        resp.read()  # a page, not an event stream: not a Sunrise API
                        raise _not_sunrise(resp)
                    failures += 1  # until this connection delivers an event
                    for event in parse_sse(resp.iter_lines(), terminal):
                        failures = 0
                        after = event.id or after
                        yield event
                        if event.event in terminal:
                            return
                # The server ends a stream after its time limit; carry on where it stopped.
                if failures > reconnects:
                    raise httpx.RemoteProtocolError(f"the event stream of {what} keeps "
                                                    "closing without any event")
            except httpx.TransportError:
                failures += 1
                if failures > reconnects:
                    raise
                time.sleep(min(2.0, 0.1 * 2 ** failures))
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"no terminal event for {what} within {timeout} s")

    def ask(self, message: str, **kw) -> dict[str, Any]:
        """Submit and wait: the finished job."""
        return self.wait(self.submit(message, **kw)["job_id"])

    # -- conversations ------------------------------------------------------------------

    def conversations(self, *, limit: int = 20, cursor: str | None = None) -> dict[str, Any]:
        """One page, newest first: ``{"items": [...], "next_cursor": str | None}``."""
        params: dict[str, Any] = {"limit": limit}
        if cursor:
            params["cursor"] = cursor
        return self._check(self.http.get("/v1/conversations", params=params))

    def conversation(self, conversation_id: str) -> dict[str, Any]:
        """The conversation with its messages (role, text, charts, job_id, created_at)."""
        return self._check(self.http.get(f"/v1/conversations/{conversation_id}"))

    def delete_conversation(self, conversation_id: str) -> None:
        """Delete it; raises ApiError 409 while one of its jobs is still in flight."""
        self._check(self.http.delete(f"/v1/conversations/{conversation_id}"))

    # -- datasets ---------------------------------------------------------------------

    def create_dataset(self, name: str, files: Sequence[str | Path]) -> dict[str, Any]:
        """POST /v1/datasets as multipart: ``name`` and one ``file`` part per path. Each
        file is streamed from disk in chunks, never read into memory whole. Returns the
        202 body (dataset_id, status ``importing``, links); raises ApiError (413 over the
        server's upload limit, 422...)."""
        with contextlib.ExitStack() as opened:
            parts = [("file", (Path(f).name, opened.enter_context(open(f, "rb"))))
                     for f in files]
            # No read timeout: the server answers only once the last byte is on its disk.
            return self._check(self.http.post("/v1/datasets", data={"name": name}, files=parts,
                                              timeout=httpx.Timeout(None, connect=5)))

    def snapshot_database(self, name: str, url: str,
                          tables: Sequence[str] | None = None) -> dict[str, Any]:
        """POST /v1/datasets with a live database's SQLAlchemy ``url`` (optionally only
        ``tables``, as ``schema.table``); the 202 body as ``create_dataset``."""
        source: dict[str, Any] = {"url": url}
        if tables:
            source["tables"] = list(tables)
        return self._check(self.http.post("/v1/datasets", json={"name": name,
                                                                "source": source}))

    def datasets(self, *, page_size: int = 100) -> list[dict[str, Any]]:
        """GET /v1/datasets: the tenant's datasets, newest first (every page of them)."""
        items: list[dict[str, Any]] = []
        params: dict[str, Any] = {"limit": page_size}
        while True:
            body = self._check(self.http.get("/v1/datasets", params=params))
            items += body["items"]
            if not body.get("next_cursor"):
                return items
            params["cursor"] = body["next_cursor"]

    def dataset(self, dataset_id: str) -> dict[str, Any]:
        """GET /v1/datasets/{id}: status, version, error and tables with their profile."""
        return self._check(self.http.get(f"/v1/datasets/{dataset_id}"))

    def run_sql(self, dataset_id: str, sql: str) -> dict[str, Any]:
        """POST /v1/datasets/{id}/sql: one read-only SELECT, answered with the text the
        model's SQL tool gets (needs the datasets scope)."""
        return self._check(self.http.post(f"/v1/datasets/{dataset_id}/sql", json={"sql": sql}))

    def annotate_dataset(self, dataset_id: str, changes: dict[str, Any]) -> dict[str, Any]:
        """PATCH /v1/datasets/{id} with descriptions, glossary, examples,
        ``{"default": True}`` or corrections (re-types, layouts: the dataset then imports
        its next version); raises ApiError 422 naming an unknown table or column, or the
        row and value a re-type does not convert."""
        return self._check(self.http.patch(f"/v1/datasets/{dataset_id}", json=changes))

    def refresh_dataset(self, dataset_id: str) -> dict[str, Any]:
        """POST /v1/datasets/{id}/refresh: re-import the same sources as a new version."""
        return self._check(self.http.post(f"/v1/datasets/{dataset_id}/refresh"))

    def delete_dataset(self, dataset_id: str) -> None:
        """DELETE /v1/datasets/{id}."""
        self._check(self.http.delete(f"/v1/datasets/{dataset_id}"))

    def verified_queries(self, dataset_id: str) -> list[dict[str, Any]]:
        """GET /v1/datasets/{id}/verified-queries: the questions and SQL admins approved."""
        return self._check(self.http.get(f"/v1/datasets/{dataset_id}/verified-queries"))["items"]

    def feedback(self, dataset_id: str, *, rating: str | None = None) -> list[dict[str, Any]]:
        """GET /v1/datasets/{id}/feedback (admins): rated answers with their question and
        the SQL they relied on."""
        params = {"rating": rating} if rating else {}
        return self._check(self.http.get(f"/v1/datasets/{dataset_id}/feedback",
                                         params=params))["items"]

    def dataset_events(self, dataset_id: str, *, last_event_id: str | None = None,
                       timeout: float | None = 3600.0, idle_timeout: float = 60.0,
                       reconnects: int = 5) -> Iterator[SseEvent]:
        """Yield the import's progress events until (and including) the terminal
        ``ready`` or ``failed``, resumed across dropped connections as ``stream``."""
        return self._follow(f"/v1/datasets/{dataset_id}/events", DATASET_TERMINAL,
                            f"dataset {dataset_id}", last_event_id, timeout, idle_timeout,
                            reconnects)


def parse_sse(lines: Iterator[str], terminal: Sequence[str] = TERMINAL) -> Iterator[SseEvent]:
    """Parse SSE lines into events (comments and ``retry:`` skipped); stops after an
    event named in ``terminal``."""
    event_id, name, data = None, "message", []
    for line in lines:
        if line == "":
            if data:
                ev = SseEvent(event_id, name, json.loads("\n".join(data)))
                yield ev
                if ev.event in terminal:
                    return
            event_id, name, data = None, "message", []
        elif line.startswith(":"):
            continue
        else:
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if field == "id":
                event_id = value
            elif field == "event":
                name = value
            elif field == "data":
                data.append(value)
