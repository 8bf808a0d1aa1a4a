"""What a failed LLM call means for the job: a specific code and a cause the user can act on.

Codes (DESIGN.md): ``llm_auth`` (401/402/403: key, billing or permission),
``llm_model_not_found`` (404), ``llm_request_too_large`` (413), ``llm_bad_request``
(400/422, the API's message included), ``llm_unavailable`` (429/5xx/529, timeouts and
connection failures, only once the SDK's retries are spent). Error types and
statuses follow https://platform.claude.com/docs/en/api/errors.
"""
from __future__ import annotations

import anthropic

from shared.errors import JobFailure

# An `error` event inside a 200 stream carries one of these types when it is worth
# retrying: the same families the SDK retries as HTTP statuses (429, 5xx, 529).
RETRYABLE_STREAM_ERRORS = frozenset({"overloaded_error", "api_error", "rate_limit_error",
                                     "timeout_error"})
# Error types of a Message Batches result, as codes.
BATCH_ERROR_CODES = {
    "authentication_error": "llm_auth",
    "permission_error": "llm_auth",
    "billing_error": "llm_auth",
    "not_found_error": "llm_model_not_found",
    "request_too_large": "llm_request_too_large",
    "invalid_request_error": "llm_bad_request",
}


def error_type(exc: anthropic.APIStatusError) -> str | None:
    """The ``error.type`` of an API error body, if it has one."""
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error") if isinstance(body.get("error"), dict) else body
    kind = error.get("type") if isinstance(error, dict) else None
    return kind if isinstance(kind, str) else None


def is_mid_stream_error(exc: BaseException) -> bool:
    """An ``event: error`` that arrived after the stream's 200 (the SDK's retries are over)."""
    return isinstance(exc, anthropic.APIStatusError) and exc.status_code < 300


def is_retryable_mid_stream(exc: BaseException) -> bool:
    return is_mid_stream_error(exc) and error_type(exc) in RETRYABLE_STREAM_ERRORS


def failure_for(exc: Exception, *, model: str, retries: int) -> JobFailure:
    """The JobFailure for an exception the SDK raised (after its own retries, if any)."""
    message = getattr(exc, "message", None) or str(exc)
    status = getattr(exc, "status_code", None)
    if isinstance(exc, anthropic.APIStatusError) and is_mid_stream_error(exc):
        kind = error_type(exc) or "error"
        if kind in RETRYABLE_STREAM_ERRORS:
            return unavailable(f"the stream failed with {kind}", retries)
        return batch_failure(kind, message, model=model)
    if isinstance(exc, anthropic.AuthenticationError | anthropic.PermissionDeniedError) \
            or status == 402:
        what = {401: "refused the API key", 402: "refused the account's billing",
                403: "refused the API key permission"}.get(status, "refused the credentials")
        return JobFailure("llm_auth", f"The Claude API {what}: {message} Check ANTHROPIC_API_KEY "
                          "and the key's workspace in the Claude Console.")
    if isinstance(exc, anthropic.NotFoundError):
        return JobFailure("llm_model_not_found", f"The Claude API does not know the model "
                          f"{model!r} ({message}). Set SUNRISE_MODEL to a current model id.")
    if status == 413:
        return JobFailure("llm_request_too_large", f"The request was too large for the Claude "
                          f"API ({message}). Ask a narrower question or start a new conversation.")
    if isinstance(exc, anthropic.BadRequestError | anthropic.UnprocessableEntityError):
        return JobFailure("llm_bad_request", f"The Claude API rejected the request: {message}")
    if isinstance(exc, anthropic.APIConnectionError | anthropic.APIStatusError):
        return unavailable(type(exc).__name__, retries)
    raise exc


def unavailable(cause: str, retries: int) -> JobFailure:
    return JobFailure("llm_unavailable", "The language model service is unavailable or "
                      f"overloaded right now ({cause}, after {retries} retries). "
                      "Please try again shortly.")


def batch_failure(kind: str, message: str, *, model: str) -> JobFailure:
    """The JobFailure for a non-retryable error type (a batch result or a stream event)."""
    code = BATCH_ERROR_CODES.get(kind, "llm_bad_request")
    if code == "llm_model_not_found":
        message = f"{message} (model {model!r}; set SUNRISE_MODEL to a current model id)"
    return JobFailure(code, f"The Claude API refused the request ({kind}): {message}")
