"""The one place where errors become RFC 9457 problem+json responses."""
from __future__ import annotations

import logging

from flask import Flask, Response, json, request
from pydantic import ValidationError
from sqlalchemy.exc import DBAPIError
from werkzeug.exceptions import HTTPException

from shared.db_retry import is_unavailable
from shared.errors import (
    PROBLEM_TYPE,
    BadRequest,
    BudgetExceeded,
    Conflict,
    DatasetQuotaExceeded,
    Forbidden,
    ImportFailed,
    InvalidKey,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    ServiceUnavailable,
    SourceTooLarge,
    StorageQuotaExceeded,
    SunriseError,
    Unauthorized,
    UnsupportedSource,
    ValidationFailed,
)

logger = logging.getLogger(__name__)

# The HTTP status of each kind of domain error (the most specific class listed wins);
# anything else is a 500.
HTTP_STATUS: dict[type[SunriseError], int] = {
    BadRequest: 400, Unauthorized: 401, Forbidden: 403, NotFound: 404, Conflict: 409, PayloadTooLarge: 413,
    ValidationFailed: 422, RateLimited: 429, ServiceUnavailable: 503,
    ImportFailed: 422, UnsupportedSource: 415, SourceTooLarge: 413,
    DatasetQuotaExceeded: 429, StorageQuotaExceeded: 413, BudgetExceeded: 429,
}
# When a client may try again after the database did not answer (lost, down or full):
# the pool's pre-ping reconnects on the next request once it is back.
DATABASE_RETRY_AFTER_S = 2
# How a 401 says which credentials to send (RFC 6750).
CHALLENGES: dict[type[SunriseError], str] = {
    InvalidKey: 'Bearer error="invalid_token"', Unauthorized: 'Bearer realm="sunrise"'}


def http_status(exc: SunriseError) -> int:
    return next((HTTP_STATUS[kind] for kind in type(exc).__mro__ if kind in HTTP_STATUS), 500)


def _headers(exc: SunriseError) -> dict[str, str]:
    headers = {}
    if exc.retry_after is not None:
        headers["Retry-After"] = str(exc.retry_after)
    challenge = next((CHALLENGES[kind] for kind in type(exc).__mro__ if kind in CHALLENGES),
                     None)
    if challenge is not None:
        headers["WWW-Authenticate"] = challenge
    return headers


def problem_body(status: int, title: str, detail: str, *, code: str = "error",
                 instance: str | None = None, **extra) -> dict:
    """The RFC 9457 document of an error (what every error of the API answers)."""
    body = {"type": PROBLEM_TYPE + code, "title": title, "status": status, "detail": detail}
    if instance is not None:
        body["instance"] = instance
    return {**body, **extra}


def problem(status: int, title: str, detail: str, *, code: str = "error",
            headers: dict | None = None, **extra) -> Response:
    body = problem_body(status, title, detail, code=code, instance=request.path, **extra)
    resp = Response(json.dumps(body), status=status, mimetype="application/problem+json")
    for key, value in (headers or {}).items():
        resp.headers[key] = value
    return resp


def init_app(app: Flask) -> None:
    @app.errorhandler(SunriseError)
    def _domain(exc: SunriseError):
        return problem(http_status(exc), exc.title, exc.detail, code=exc.code,
                       headers=_headers(exc), **exc.extra)

    @app.errorhandler(ValidationError)
    def _validation(exc: ValidationError):
        errors = [{"loc": list(e["loc"]), "msg": e["msg"], "type": e["type"]}
                  for e in exc.errors(include_url=False, include_context=False)]
        detail = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'body'}: {e['msg']}" for e in errors)
        return problem(422, "Validation failed", detail, code="validation_failed", errors=errors)

    @app.errorhandler(HTTPException)
    def _http(exc: HTTPException):
        return problem(exc.code or 500, exc.name, exc.description or exc.name,
                       code=exc.name.lower().replace(" ", "_"))

    @app.errorhandler(DBAPIError)
    def _database(exc: DBAPIError):
        if not is_unavailable(exc):
            return _unexpected(exc)
        logger.warning("database unavailable on %s %s: %s", request.method, request.path,
                       exc.orig)
        return problem(503, "Database unavailable",
                       "Sunrise's database cannot be reached or accepts no more connections "
                       "right now; try again in a few seconds.", code="database_unavailable",
                       headers={"Retry-After": str(DATABASE_RETRY_AFTER_S)})

    @app.errorhandler(Exception)
    def _unexpected(exc: Exception):
        logger.exception("unhandled error on %s %s", request.method, request.path)
        return problem(500, "Internal error", "Sunrise hit an unexpected error; it was logged.",
                       code="internal_error")
