"""``sunrise mcp``: the MCP tools of ``api/mcp/tools.py`` over stdio, for clients that
launch a local server (Claude Desktop, IDEs), talking to a Sunrise API over HTTP with
one key.

Each tool call runs the blocking HTTP client in a worker thread (``anyio.to_thread``),
so the stdio loop keeps reading and writing messages -- progress notifications
included -- while a job runs. A refusal of the API (its problem's detail) becomes the
tool's error. stdout carries the protocol only; logs go to stderr.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import anyio
import click

from api.mcp.tools import PROGRESS_EVENTS, TERMINAL, build_server
from sunrise.cli.api_options import api_options
from sunrise.client import ApiError, SunriseClient

STREAM_TIMEOUT_S = 900.0


class ApiRefusal(Exception):
    """An API problem, with the ``detail`` the tools pass on."""

    def __init__(self, error: ApiError):
        super().__init__(str(error))
        self.detail = error.problem.get("detail") or str(error)


class HttpBackend:
    """The tools' backend over the HTTP API (``sunrise/client.py``)."""

    def __init__(self, api_url: str, api_key: str | None):
        self.api_url, self.api_key = api_url, api_key

    async def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await anyio.to_thread.run_sync(fn, *args)

    def _client(self) -> SunriseClient:
        return SunriseClient(self.api_url, self.api_key)

    def _do(self, action: Callable[[SunriseClient], Any]) -> Any:
        with self._client() as client:
            try:
                return action(client)
            except ApiError as exc:
                raise ApiRefusal(exc) from None

    def ask(self, question: str, dataset_id: str | None,
            conversation_id: str | None) -> Iterator[list[tuple[str, dict[str, Any]]]]:
        """Submit, then the job's progress events one by one (each is already a thread
        hop of its own here) until its end, with the job's view (see ``Backend.ask``)."""
        job = self._do(lambda c: c.submit(question, dataset_id=dataset_id,
                                          conversation_id=conversation_id))
        job_id = job["job_id"]
        with self._client() as client:
            try:
                for event in client.stream(job_id, timeout=STREAM_TIMEOUT_S):
                    if event.event in TERMINAL:
                        break
                    if event.event in PROGRESS_EVENTS:
                        yield [(event.event, event.data)]
                view = client.get(job_id)
            except ApiError as exc:
                raise ApiRefusal(exc) from None
        # Once the stream is closed; a stream that ended without its end reads as failed.
        yield [(view["status"] if view["status"] in TERMINAL else "failed", view)]

    def datasets(self) -> list[dict[str, Any]]:
        return self._do(lambda c: c.datasets())

    def dataset(self, dataset_id: str) -> dict[str, Any]:
        return self._do(lambda c: c.dataset(dataset_id))

    def run_sql(self, dataset_id: str, sql: str) -> dict[str, Any]:
        return self._do(lambda c: c.run_sql(dataset_id, sql))


@click.command("mcp")
@api_options
def mcp_command(api_url: str, api_key: str | None) -> None:
    """Serve Sunrise's MCP tools over stdio, talking to the API at --api with --key."""
    server = build_server(HttpBackend(api_url, api_key))
    anyio.run(server.run_stdio_async)
