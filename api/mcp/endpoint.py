"""``POST /mcp``: the MCP tools over Streamable HTTP, authenticated with the API keys;
``init_app(app)`` registers it (see ``api/mcp/__init__.py``)."""
from __future__ import annotations

from flask import Blueprint, Flask, Response, current_app, request, stream_with_context

from api.acting import current_principal
from api.auth import authenticate
from api.limits import limit_requests
from api.mcp.asgi_bridge import McpBridge, asgi_scope
from api.mcp.in_process import InProcessBackend
from api.resources import resources

bp = Blueprint("mcp", __name__)
bp.before_request(authenticate)
bp.before_request(limit_requests)

EXTENSION = "sunrise_mcp"
SILENCE_MARGIN_S = 120  # past a job's deadline, a silent handler is abandoned


def init_app(app: Flask) -> None:
    app.extensions[EXTENSION] = McpBridge()
    app.register_blueprint(bp)


@bp.route("/mcp", methods=["POST", "GET", "DELETE"])
def mcp_endpoint() -> Response:
    res, principal = resources(), current_principal()
    exchange = current_app.extensions[EXTENSION].exchange(
        asgi_scope(request.environ, request.headers.items()), request.get_data(),
        lambda ex: InProcessBackend(res, principal, ex.call))
    silence_s = res.settings.job_deadline_s + SILENCE_MARGIN_S
    try:
        start = exchange.next_message(silence_s)
    except BaseException:
        exchange.close()
        raise
    if start is None or start.get("type") != "http.response.start":
        exchange.close()
        raise RuntimeError("the MCP handler ended without a response")
    headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in start.get("headers", [])]

    def body():
        try:
            while (message := exchange.next_message(silence_s)) is not None:
                if message.get("type") != "http.response.body":
                    continue
                if message.get("body"):
                    yield message["body"]
                if not message.get("more_body"):
                    return
        finally:
            exchange.close()

    return Response(stream_with_context(body()), status=start["status"], headers=headers)
