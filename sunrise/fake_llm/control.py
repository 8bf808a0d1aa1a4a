"""The control plane under `/_control/` (JSON in, JSON out, no auth).

    GET    /_control/health                     -> {"ok": true, "offline_model": true}
    POST   /_control/reset                      -> {"ok": true}
    GET    /_control/latency                    -> {"fixed_ms": f, "jitter_ms": j}
    POST   /_control/latency {"fixed_ms", "jitter_ms"}   (either may be omitted)
    GET    /_control/faults                     -> {"faults": [rule...]}
    POST   /_control/faults {"kind", "count"|"rate", "retry_after"?, "seconds"?}
                                                -> {"added": rule, "faults": [rule...]}
    DELETE /_control/faults                     -> {"faults": []}
    GET    /_control/scenarios                  -> {"scenarios": {name: [turn...]}}
    POST   /_control/scenarios {"name", "turns": [...]}  -> {"name": n, "turns": count}
    GET    /_control/log?since=SEQ              -> {"entries": [entry...]}
    GET    /_control/stats                      -> counters (see `RequestLog.stats`)
                                                   + "cache_entries", "clock"
    POST   /_control/clock {"advance_s": s}     -> {"now": simulated seconds}

A malformed control request answers 400 with the Anthropic error shape.
"""

from __future__ import annotations

import json

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from sunrise.fake_llm.errors import ApiError
from sunrise.fake_llm.state import FakeLLMState
from sunrise.fake_llm.wire import json_bytes


def _state(request: Request) -> FakeLLMState:
    return request.app.state.fake_llm


async def _body(request: Request) -> dict:
    raw = await request.body()
    try:
        body = json.loads(raw) if raw.strip() else {}
    except ValueError:
        raise ApiError(400, "control request body is not valid JSON") from None
    if not isinstance(body, dict):
        raise ApiError(400, "control request body must be a JSON object")
    return body


def _json(payload: object) -> Response:
    return Response(json_bytes(payload), media_type="application/json")


async def health(request: Request) -> Response:
    return _json({"ok": True, "offline_model": True})


async def reset(request: Request) -> Response:
    _state(request).reset()
    return _json({"ok": True})


async def latency(request: Request) -> Response:
    current = _state(request).latency
    if request.method == "POST":
        body = await _body(request)
        try:
            current.set(
                float(body.get("fixed_ms", current.fixed_ms)),
                float(body.get("jitter_ms", current.jitter_ms)),
            )
        except (TypeError, ValueError) as error:
            raise ApiError(400, f"latency: {error}") from None
    return _json(current.as_json())


async def faults(request: Request) -> Response:
    plan = _state(request).faults
    if request.method == "DELETE":
        plan.clear()
    elif request.method == "POST":
        try:
            added = plan.add(await _body(request))
        except ValueError as error:
            raise ApiError(400, f"faults: {error}") from None
        return _json({"added": added.as_json(), "faults": plan.snapshot()})
    return _json({"faults": plan.snapshot()})


async def scenarios(request: Request) -> Response:
    book = _state(request).scenarios
    if request.method == "POST":
        body = await _body(request)
        try:
            book.add(body.get("name"), body.get("turns"))
        except ValueError as error:
            raise ApiError(400, f"scenarios: {error}") from None
        return _json({"name": body["name"], "turns": len(body["turns"])})
    return _json({"scenarios": book.snapshot()})


async def log(request: Request) -> Response:
    try:
        since = int(request.query_params.get("since", "0"))
    except ValueError:
        raise ApiError(400, "log: 'since' must be an integer") from None
    return _json({"entries": _state(request).log.entries(since)})


async def stats(request: Request) -> Response:
    state = _state(request)
    return _json(
        {**state.log.stats(), "cache_entries": len(state.cache), "clock": state.clock.now()}
    )


async def clock(request: Request) -> Response:
    body = await _body(request)
    try:
        now = _state(request).clock.advance(float(body.get("advance_s", 0)))
    except (TypeError, ValueError) as error:
        raise ApiError(400, f"clock: {error}") from None
    return _json({"now": now})


def control_routes() -> list[Route]:
    return [
        Route("/_control/health", health, methods=["GET"]),
        Route("/_control/reset", reset, methods=["POST"]),
        Route("/_control/latency", latency, methods=["GET", "POST"]),
        Route("/_control/faults", faults, methods=["GET", "POST", "DELETE"]),
        Route("/_control/scenarios", scenarios, methods=["GET", "POST"]),
        Route("/_control/log", log, methods=["GET"]),
        Route("/_control/stats", stats, methods=["GET"]),
        Route("/_control/clock", clock, methods=["POST"]),
    ]
