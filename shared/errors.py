"""Domain errors: what went wrong, in words and a stable ``code``, never how a protocol
says it. The API answers each kind with its HTTP status in one place
(``api/problems.py``); the worker records a job's ``code`` on the job row."""
from __future__ import annotations

# Every problem document the API answers has a ``type`` under this URI (RFC 9457): how a
# client tells Sunrise's errors from those of whatever else may answer at its address.
PROBLEM_TYPE = "https://sunrise.dev/problems/"


class SunriseError(Exception):
    """Base of every domain error: a stable machine ``code``, a ``title`` and a ``detail``
    for people. ``retry_after`` (seconds) says when trying again makes sense; ``extra``
    are facts a client can act on (they become fields of the problem document)."""

    code = "internal_error"
    title = "Internal error"

    def __init__(self, detail: str = "", *, retry_after: int | None = None, **extra):
        super().__init__(detail or self.title)
        self.detail = detail or self.title
        self.retry_after = retry_after
        self.extra = extra


# -- a request that cannot be done as asked -------------------------------------------

class BadRequest(SunriseError):
    code, title = "bad_request", "Bad request"


class Unauthorized(SunriseError):
    """No usable credentials were sent."""

    code, title = "unauthorized", "Unauthorized"


class InvalidKey(Unauthorized):
    """An API key was sent, but it is unknown or revoked."""


class Forbidden(SunriseError):
    """The caller is known, but its role or its key's scopes do not allow this (403)."""

    code, title = "forbidden", "Forbidden"


class NotFound(SunriseError):
    code, title = "not_found", "Not found"


class Conflict(SunriseError):
    code, title = "conflict", "Conflict"


class PayloadTooLarge(SunriseError):
    code, title = "payload_too_large", "Payload too large"


class ValidationFailed(SunriseError):
    code, title = "validation_failed", "Validation failed"


class OutboundRefused(ValidationFailed):
    """A tenant-named destination this service will not connect to (shared/outbound.py);
    the detail says why."""

    code, title = "outbound_refused", "Destination not allowed"


class RateLimited(SunriseError):
    code, title = "rate_limited", "Too many requests"


class BudgetExceeded(SunriseError):
    """The tenant's spend passed a ``block`` budget (429, ``shared/budgets.py``): the
    detail names the limit, the spend and when the period resets."""

    code, title = "budget_exceeded", "Budget exceeded"


class DatasetQuotaExceeded(SunriseError):
    """The tenant has as many datasets as its quota allows (429)."""

    code, title = "dataset_quota_exceeded", "Dataset quota exceeded"


class StorageQuotaExceeded(SunriseError):
    """The tenant's stored dataset bytes would pass its quota (413)."""

    code, title = "storage_quota_exceeded", "Storage quota exceeded"


class ServiceUnavailable(SunriseError):
    code, title = "service_unavailable", "Service unavailable"


# -- what ends a job ---------------------------------------------------------------------

class JobFailure(SunriseError):
    """A job ends ``failed`` with this ``code``; the message is meant for humans."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


class JobCancelled(Exception):
    """Raised inside the loop at a round boundary when a cancel was requested."""


# -- a dataset import ----------------------------------------------------------------------

class ImportFailed(SunriseError):
    """A dataset import could not be done; nothing was changed.

    ``detail`` names the file (or the masked database URL) and, where it applies, the
    line or row; the same facts travel in ``extra`` (``source``, ``line``, ``row``,
    ``table``) so the problem+json body carries them as fields.
    """

    code, title = "import_failed", "Import failed"


class EmptySource(ImportFailed):
    code, title = "empty_source", "Empty source"


class MalformedSource(ImportFailed):
    code, title = "malformed_source", "Malformed source"


class UnsupportedSource(ImportFailed):
    code, title = "unsupported_source", "Unsupported source"


class SourceUnreachable(ImportFailed):
    code, title = "source_unreachable", "Source unreachable"


class ImportOutOfMemory(ImportFailed):
    """The import's process ended for want of memory (``worker/datasets/import_process.py``)."""

    code, title = "import_out_of_memory", "Import out of memory"


class ImportTimedOut(ImportFailed):
    """The import outlived ``SUNRISE_IMPORT_DEADLINE_S`` and was stopped."""

    code, title = "import_timed_out", "Import timed out"


class ImportAbandoned(ImportFailed):
    """The import was attempted ``max_attempts`` times without a result."""

    code, title = "import_abandoned", "Import abandoned"


class MissingTables(ImportFailed):
    code, title = "missing_tables", "Missing tables"


class SourceTooLarge(ImportFailed):
    code, title = "source_too_large", "Source too large"


class SourceRefused(ImportFailed):
    """A database source this service will not connect to or pass on as given: a refused
    destination (shared/outbound.py) or a URL part the drivers never receive."""

    code, title = "source_refused", "Source refused"
class TooManyRows(SourceTooLarge):
    code, title = "too_many_rows", "Too many rows"


class TooManyColumns(SourceTooLarge):
    code, title = "too_many_columns", "Too many columns"


class SheetTooLarge(SourceTooLarge):
    code, title = "sheet_too_large", "Sheet too large"


class WritableRole(SourceRefused):
    """A live source's role can write, and the dataset did not accept that
    (``allow_writable_role``): 422 naming one privilege and how to make a read-only role."""

    code, title = "writable_role", "Role can write"
