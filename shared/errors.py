"""Domain errors. The API maps them to problem+json in one place (api/problems.py);
the worker records ``code`` on the job row."""
from __future__ import annotations


class SunriseError(Exception):
    """Base of every domain error: a stable machine ``code`` and an HTTP ``status``."""

    code = "internal_error"
    status = 500
    title = "Internal error"

    def __init__(self, detail: str = "", *, headers: dict[str, str] | None = None, **extra):
        super().__init__(detail or self.title)
        self.detail = detail or self.title
        self.headers = headers or {}
        self.extra = extra


class BadRequest(SunriseError):
    code, status, title = "bad_request", 400, "Bad request"


class Unauthorized(SunriseError):
    code, status, title = "unauthorized", 401, "Unauthorized"


class NotFound(SunriseError):
    code, status, title = "not_found", 404, "Not found"


class Conflict(SunriseError):
    code, status, title = "conflict", 409, "Conflict"


class PayloadTooLarge(SunriseError):
    code, status, title = "payload_too_large", 413, "Payload too large"


class ValidationFailed(SunriseError):
    code, status, title = "validation_failed", 422, "Validation failed"


class RateLimited(SunriseError):
    code, status, title = "rate_limited", 429, "Too many requests"


class ServiceUnavailable(SunriseError):
    code, status, title = "service_unavailable", 503, "Service unavailable"


class JobFailure(SunriseError):
    """A job ends ``failed`` with this ``code``; the message is meant for humans."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


class JobCancelled(Exception):
    """Raised inside the loop at a round boundary when a cancel was requested."""


class ImportFailed(SunriseError):
    """A dataset import could not be done; nothing was changed.

    ``detail`` names the file (or the masked database URL) and, where it applies, the
    line or row; the same facts travel in ``extra`` (``source``, ``line``, ``row``,
    ``table``) so the problem+json body carries them as fields.
    """

    code, status, title = "import_failed", 422, "Import failed"


class EmptySource(ImportFailed):
    code, title = "empty_source", "Empty source"


class MalformedSource(ImportFailed):
    code, title = "malformed_source", "Malformed source"


class UnsupportedSource(ImportFailed):
    code, status, title = "unsupported_source", 415, "Unsupported source"


class SourceUnreachable(ImportFailed):
    code, title = "source_unreachable", "Source unreachable"


class MissingTables(ImportFailed):
    code, title = "missing_tables", "Missing tables"


class SourceTooLarge(ImportFailed):
    code, status, title = "source_too_large", 413, "Source too large"
