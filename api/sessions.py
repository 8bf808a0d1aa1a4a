"""Console sessions: a server-side session behind an HttpOnly cookie, with a CSRF token.

A signed-in person's browser holds two cookies: ``sunrise_session`` (HttpOnly: scripts
never read it) and ``sunrise_csrf`` (readable by the console's script, which echoes it
as ``X-CSRF-Token`` on every state-changing request). The database keeps only SHA-256
hashes of both. Both cookies are ``Secure`` and ``SameSite=Lax``, except that in the
``development`` and ``test`` environments a plain-http request to 127.0.0.1 or
localhost gets them without ``Secure`` (a browser would otherwise drop them there).

``start_session`` and ``end_session`` are the seam every sign-in method uses (the local
sign-in link here, OpenID Connect elsewhere); each sign-in is written to the audit log.
"""
from __future__ import annotations

import hmac
import secrets
from datetime import timedelta

from flask import Response, request
from sqlalchemy import select

from api.resources import resources
from shared.audit import record
from shared.errors import Forbidden, Unauthorized
from shared.keys import hash_key
from shared.models import ConsoleSession, User, utcnow

SESSION_COOKIE = "sunrise_session"
CSRF_COOKIE = "sunrise_csrf"
CSRF_HEADER = "X-CSRF-Token"
SESSION_TTL = timedelta(hours=12)
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost"})


def _secure() -> bool:
    local_http = (request.scheme == "http"
                  and request.host.rsplit(":", 1)[0] in _LOCAL_HOSTS)
    return not (local_http and resources().settings.env in ("development", "test"))


def start_session(response: Response, tenant_id: int, user_id: int, *,
                  method: str = "link") -> None:
    """Start a session for user ``user_id`` of ``tenant_id``: store it, set both cookies
    on ``response`` and record the sign-in (``method``: how they signed in). Raises
    Forbidden if the user does not exist in that tenant or is disabled."""
    token, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
    now = utcnow()
    with resources().session() as s:
        user = s.get(User, user_id)
        if user is None or user.tenant_id != tenant_id or user.disabled:
            raise Forbidden("This account cannot sign in.")
        s.add(ConsoleSession(token_hash=hash_key(token), csrf_hash=hash_key(csrf),
                             tenant_id=tenant_id, user_id=user_id, created_at=now,
                             expires_at=now + SESSION_TTL))
        record(s, tenant_id, "sign_in", actor=f"user:{user.external_id}", user_id=user_id,
               details={"method": method})
    secure, max_age = _secure(), int(SESSION_TTL.total_seconds())
    response.set_cookie(SESSION_COOKIE, token, max_age=max_age, path="/", secure=secure,
                        httponly=True, samesite="Lax")
    response.set_cookie(CSRF_COOKIE, csrf, max_age=max_age, path="/", secure=secure,
                        httponly=False, samesite="Lax")


def end_session(response: Response) -> None:
    """End the request's session (if any) in the database and clear both cookies."""
    token = request.cookies.get(SESSION_COOKIE)
    if token:
        with resources().session() as s:
            row = s.scalar(select(ConsoleSession)
                           .where(ConsoleSession.token_hash == hash_key(token)))
            if row is not None and row.ended_at is None:
                row.ended_at = utcnow()
                user = s.get(User, row.user_id)
                record(s, row.tenant_id, "sign_out", user_id=row.user_id,
                       actor=f"user:{user.external_id if user else row.user_id}")
    for name in (SESSION_COOKIE, CSRF_COOKIE):
        response.delete_cookie(name, path="/", secure=_secure(), samesite="Lax")


def session_user(token: str) -> tuple[int, int]:
    """``(tenant_id, user_id)`` of the live session ``token``; on a state-changing
    request the ``X-CSRF-Token`` header must match the session's. Raises Unauthorized
    (unknown, ended or expired session) or Forbidden (CSRF token missing or wrong)."""
    with resources().session() as s:
        row = s.scalar(select(ConsoleSession)
                       .where(ConsoleSession.token_hash == hash_key(token)))
        if row is None or row.ended_at is not None or row.expires_at < utcnow():
            raise Unauthorized("Your console session has ended; sign in again.")
        if request.method not in SAFE_METHODS:
            sent = request.headers.get(CSRF_HEADER, "")
            if not sent or not hmac.compare_digest(hash_key(sent), row.csrf_hash):
                raise Forbidden(f"A change made with a console session needs the "
                                f"{CSRF_HEADER} header (the {CSRF_COOKIE} cookie's value).")
        return row.tenant_id, row.user_id
