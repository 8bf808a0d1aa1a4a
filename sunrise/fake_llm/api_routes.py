"""The Anthropic-compatible surface: `/v1/messages`, `/v1/messages/count_tokens`,
`/v1/messages/batches...` and `/v1/models/{id}`.

Every endpoint requires `x-api-key` or `Authorization: Bearer` (any value; none
-> 401 `authentication_error`), accepts any `anthropic-version`, and is recorded
in the request log with its final status. `/v1/messages` applies, in order:
validation (400), one request fault if armed (429/529/500 or a hang), the reply
(see `message_builder`), then the configured latency — slept before a JSON
body, or spread over a stream (40% before the first event, the rest between
content deltas) so the total stays close to the configured value.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable

from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from sunrise.fake_llm import message_batches
from sunrise.fake_llm.errors import ApiError
from sunrise.fake_llm.faults import REQUEST_KINDS
from sunrise.fake_llm.model_rules import model_info
from sunrise.fake_llm.request_log import auth_scheme
from sunrise.fake_llm.request_validation import validate_messages
from sunrise.fake_llm.state import FakeLLMState
from sunrise.fake_llm.wire import cut_for_stream_error, json_bytes, stream_events

Handler = Callable[[Request, FakeLLMState, object, dict], Awaitable[Response]]
CLIENT_CLOSED = 499  # nginx's convention for "the client went away first"
# https://platform.claude.com/docs/en/api/errors ("Request size limits"): 32 MB.
MAX_REQUEST_BYTES = 32 * 1024 * 1024


async def _read_json(request: Request) -> object:
    raw = await request.body()
    if not raw:
        return None
    if len(raw) > MAX_REQUEST_BYTES:
        raise ApiError(413, f"request is {len(raw)} bytes; the Messages API takes at most "
                       f"{MAX_REQUEST_BYTES}")
    try:
        return json.loads(raw)
    except ValueError as error:
        raise ApiError(400, f"request body is not valid JSON: {error}") from None


def _logged(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """Wrap an API handler with body parsing, authentication and request logging."""

    async def endpoint(request: Request) -> Response:
        state: FakeLLMState = request.app.state.fake_llm
        body, outcome = None, {}
        try:
            if request.method == "POST":
                body = await _read_json(request)
            if auth_scheme(request) is None:
                raise ApiError(401, "x-api-key header or Authorization: Bearer token is required")
            response = await handler(request, state, body, outcome)
        except ApiError as error:
            state.log.record(request, body, error.status, error=error.error_type, **outcome)
            raise
        except ClientDisconnect:
            # The client gave up while sending its request; nobody reads an answer.
            state.log.record(request, body, CLIENT_CLOSED, **outcome)
            return Response(status_code=CLIENT_CLOSED)
        state.log.record(request, body, response.status_code, **outcome)
        return response

    return endpoint


async def _hang(request: Request, state: FakeLLMState, seconds: float) -> bool:
    """Stall up to `seconds`; True if the client disconnected or the server is stopping."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while (remaining := deadline - loop.time()) > 0:
        if state.stopping or await request.is_disconnected():
            return True
        await asyncio.sleep(min(0.05, remaining))
    return False


async def _paced(events: list[tuple[str, bytes]], delay_s: float) -> AsyncIterator[bytes]:
    if delay_s <= 0:
        # One write when nobody asked for pacing: cheapest for throughput runs.
        yield b"".join(data for _, data in events)
        return
    deltas = sum(1 for kind, _ in events if kind == "content_block_delta")
    head = delay_s * 0.4 if deltas else delay_s
    await asyncio.sleep(head)
    step = (delay_s - head) / deltas if deltas else 0.0
    for kind, data in events:
        if step and kind == "content_block_delta":
            await asyncio.sleep(step)
        yield data


async def create_message(
    request: Request, state: FakeLLMState, body: object, outcome: dict
) -> Response:
    validate_messages(body)
    stream = body.get("stream") is True
    outcome.update(stream=stream, faults=[])
    fault = state.faults.take(lambda kind: kind in REQUEST_KINDS)
    if fault is not None:
        outcome["faults"].append(fault.kind)
        if fault.kind != "hang":
            raise ApiError(int(fault.kind), retry_after=fault.retry_after)
        if await _hang(request, state, fault.seconds or state.config.hang_seconds):
            return Response(status_code=CLIENT_CLOSED)

    built = state.builder.build(body, faults=state.faults, stream=stream)
    message = built.message
    if built.fault:
        outcome["faults"].append(built.fault)
    outcome.update(
        usage=message["usage"], stop_reason=message["stop_reason"], scenario=built.scenario
    )
    delay = state.latency.sample_s()
    if not stream:
        if delay > 0:
            await asyncio.sleep(delay)
        return Response(json_bytes(message), media_type="application/json")
    events = stream_events(message)
    if built.stream_error:
        events = cut_for_stream_error(events)
    return StreamingResponse(
        _paced(events, delay),
        media_type="text/event-stream; charset=utf-8",
        headers={"cache-control": "no-cache"},
    )


async def count_tokens(
    request: Request, state: FakeLLMState, body: object, outcome: dict
) -> Response:
    validate_messages(body, require_max_tokens=False)
    _, blocks = state.builder.check(body)
    return Response(json_bytes({"input_tokens": sum(block.tokens for block in blocks)}),
                    media_type="application/json")


async def retrieve_model(
    request: Request, state: FakeLLMState, body: object, outcome: dict
) -> Response:
    return Response(json_bytes(model_info(request.path_params["model_id"])),
                    media_type="application/json")


def api_routes() -> list[Route]:
    return [
        Route("/v1/messages", _logged(create_message), methods=["POST"]),
        Route("/v1/messages/count_tokens", _logged(count_tokens), methods=["POST"]),
        Route("/v1/models/{model_id}", _logged(retrieve_model), methods=["GET"]),
        Route("/v1/messages/batches", _logged(message_batches.create_batch), methods=["POST"]),
        Route("/v1/messages/batches", _logged(message_batches.list_batches), methods=["GET"]),
        Route("/v1/messages/batches/{batch_id}", _logged(message_batches.retrieve_batch), methods=["GET"]),
        Route(
            "/v1/messages/batches/{batch_id}/cancel",
            _logged(message_batches.cancel_batch),
            methods=["POST"],
        ),
        Route(
            "/v1/messages/batches/{batch_id}/results",
            _logged(message_batches.batch_results),
            methods=["GET"],
        ),
    ]
