"""The recorded real-API streams in ../shared/testdata/anthropic-sdk-fixtures/, served
unchanged over real HTTP: ``POST /v1/messages`` with an ``x-fixture`` header naming
the file gets its bytes back as an event stream."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from sunrise.fake_llm import run_in_thread

FIXTURES = Path("/work/shared/testdata/anthropic-sdk-fixtures")
FIXTURE_FILES = sorted(p.name for p in [*FIXTURES.glob("*.txt"), *FIXTURES.glob("*.sse")])


@contextmanager
def replaying() -> Iterator:
    """A server replaying the recordings; yields its handle (``.base_url``)."""
    async def replay(request: Request) -> Response:
        # Some stored files lost the blank line that ends the last event on the
        # wire; it is restored so the SDK dispatches `message_stop`.
        recorded = (FIXTURES / request.headers["x-fixture"]).read_bytes().rstrip(b"\n") + b"\n\n"
        return Response(recorded, media_type="text/event-stream")

    handle = run_in_thread(app=Starlette(routes=[Route("/v1/messages", replay, methods=["POST"])]))
    try:
        yield handle
    finally:
        handle.stop()
