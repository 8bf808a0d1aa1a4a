"""The one error type of the offline model and its rendering as Anthropic errors.

Handlers raise `ApiError`; `create_app` registers `api_error_response` as the
single place that turns it into the wire shape the SDK parses:
`{"type": "error", "error": {"type": ..., "message": ...}, "request_id": ...}`
with a `request-id` header and, on 429/529, a `retry-after` header in seconds.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from sunrise.fake_llm.wire import json_bytes, new_request_id

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}

DEFAULT_MESSAGES = {
    401: "invalid x-api-key (offline model)",
    403: "Your API key does not have permission to use the specified resource. (offline model)",
    404: "Not found (offline model)",
    413: "Request exceeds the maximum allowed number of bytes. (offline model)",
    429: "Number of request tokens has exceeded your per-minute rate limit (offline model)",
    500: "Internal server error (offline model)",
    529: "Overloaded",
}


class ApiError(Exception):
    """An Anthropic-style API error with its HTTP status.

    `retry_after` (seconds, may be fractional) is sent as `retry-after`;
    it defaults to 1 s for 429 and 529 as the real service always sends one.
    """

    def __init__(self, status: int, message: str | None = None, retry_after: float | None = None):
        self.status = status
        self.error_type = ERROR_TYPES.get(
            status, "invalid_request_error" if status < 500 else "api_error"
        )
        self.message = message or DEFAULT_MESSAGES.get(status, self.error_type)
        if retry_after is None and status in (429, 529):
            retry_after = 1
        self.retry_after = retry_after
        super().__init__(f"{status} {self.error_type}: {self.message}")

    def body(self, request_id: str) -> dict:
        """The JSON body the real API sends for this error."""
        return {
            "type": "error",
            "error": {"type": self.error_type, "message": self.message},
            "request_id": request_id,
        }


def format_retry_after(seconds: float) -> str:
    """Whole seconds as an integer string; fractions kept so tests can retry fast."""
    return str(int(seconds)) if float(seconds).is_integer() else repr(float(seconds))


def error_response(error: ApiError, request_id: str) -> Response:
    """Render `error` as the HTTP response the real API would send."""
    headers = {}
    if error.retry_after is not None:
        headers["retry-after"] = format_retry_after(error.retry_after)
    return Response(
        json_bytes(error.body(request_id)),
        status_code=error.status,
        headers=headers,
        media_type="application/json",
    )


async def api_error_response(request: Request, exc: Exception) -> Response:
    """Starlette exception handler for `ApiError` (registered in `create_app`)."""
    assert isinstance(exc, ApiError)
    request_id = getattr(request.state, "request_id", None) or new_request_id()
    return error_response(exc, request_id)


async def not_found_response(request: Request, exc: Exception) -> Response:
    """Unknown routes answer like the real API: 404 `not_found_error`."""
    status = getattr(exc, "status_code", 404)
    request_id = getattr(request.state, "request_id", None) or new_request_id()
    message = "Not found" if status == 404 else f"HTTP {status}"
    return error_response(ApiError(status, message), request_id)
