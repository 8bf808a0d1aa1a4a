"""The offline model's ASGI application factory.

`create_app(config)` builds a Starlette app whose state (cache, faults,
scenarios, log, batches, clock) lives on one `FakeLLMState` at
`app.state.fake_llm`; nothing is shared between apps. Every response carries a
`request-id` header; every error, including unknown routes, has the Anthropic
error body.
"""

from __future__ import annotations

import logging

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sunrise.fake_llm.api_routes import api_routes
from sunrise.fake_llm.clock import SimClock
from sunrise.fake_llm.config import FakeLLMConfig
from sunrise.fake_llm.control import control_routes
from sunrise.fake_llm.errors import ApiError, api_error_response, error_response, not_found_response
from sunrise.fake_llm.state import FakeLLMState
from sunrise.fake_llm.wire import new_request_id

logger = logging.getLogger(__name__)


class RequestIdMiddleware:
    """Gives each HTTP request an id (`request.state.request_id`) and echoes it
    as the `request-id` response header, as the real API does."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = new_request_id()
        scope.setdefault("state", {})["request_id"] = request_id
        header = (b"request-id", request_id.encode())

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), header]
            await send(message)

        await self.app(scope, receive, send_with_id)


async def _unexpected_error(request: Request, exc: Exception) -> Response:
    # Runs outside RequestIdMiddleware, so the header is added here.
    logger.exception("offline model failed on %s %s", request.method, request.url.path)
    request_id = new_request_id()
    response = error_response(ApiError(500), request_id)
    response.headers["request-id"] = request_id
    return response


def create_app(config: FakeLLMConfig | None = None, clock: SimClock | None = None) -> Starlette:
    """A fresh offline-model app; `clock` may be injected to control cache TTLs."""
    app = Starlette(
        routes=[*api_routes(), *control_routes()],
        middleware=[Middleware(RequestIdMiddleware)],
        exception_handlers={
            ApiError: api_error_response,
            404: not_found_response,
            405: not_found_response,
            Exception: _unexpected_error,
        },
    )
    app.state.fake_llm = FakeLLMState(config or FakeLLMConfig(), clock)
    return app
