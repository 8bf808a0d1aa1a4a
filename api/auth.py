"""Authentication: every /v1 request runs as exactly one tenant and at most one user.

A request is authenticated by an API key (``Authorization: Bearer``), or, without one,
by a console session cookie (``api/sessions.py``). It then acts as a ``Principal``
(``g.principal``, read through ``api.acting.current_principal``):

- a service key acts for its tenant with its scopes (a full-scope key as an owner);
- a service key with the ``act_as`` scope may send ``Sunrise-User: <external_id>`` to act
  as that user (an unknown one is created as a viewer, or refused, by the tenant's
  ``unknown_users``); without ``act_as`` the header is refused (403);
- a user's personal key, and a console session, act as their user.

Key grants and users' principals are remembered for ``key_cache_s`` seconds
(``api/tenant_cache.py``), stamped with the tenant's access generation
(``shared/access_generation.py``). ``authenticate`` serves what is remembered;
``confirm_access``, given the current generation by the rate limiter's round trip, reads
again whatever is stamped otherwise, so a revoked key, a disabled user or a changed role
is refused or applied on the next request in every process.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from flask import current_app, g, request
from sqlalchemy import select

from api.resources import resources
from api.sessions import SESSION_COOKIE, session_user
from api.tenant_cache import ANY
from shared.errors import Forbidden, InvalidKey, Unauthorized, ValidationFailed
from shared.keys import KeyGrant, get_or_create_tenant, grant_for_key, hash_key
from shared.models import Tenant, User
from shared.people import check_external_id, principal_for_user, upsert_user
from shared.principal import SCOPES, Principal

DEFAULT_TENANT = "default"
USER_HEADER = "Sunrise-User"

V = TypeVar("V", bound=Callable)


def accepts_query_token(view: V) -> V:
    """Mark a GET view that may be authenticated by ``?access_token=``: EventSource and
    report links cannot send headers. Put it below the route decorator."""
    view.accepts_query_token = True  # type: ignore[attr-defined]
    return view


def authenticate() -> None:
    """``before_request`` hook: sets ``g.tenant_id``, ``g.principal`` and ``g.actor`` (who
    acts, for the audit log), or raises Unauthorized (401) or Forbidden (403).

    The key comes from ``Authorization: Bearer``, or from ``?access_token=`` on the GET
    views marked ``accepts_query_token`` only: a key in a URL ends up in logs and
    histories, which is acceptable for a read-only link and not for a change.
    Remembered grants and principals serve whatever their stamp; ``confirm_access``
    checks the stamps.
    """
    _authenticate(resources(), ANY)


def confirm_access(generation: str | None) -> None:
    """Authenticate again, reading what was remembered under another generation, unless
    every grant and principal this request used is stamped ``generation`` (the tenant's
    current one, None if it never changed). Raises as ``authenticate`` does: a key
    revoked or a user disabled in another process is refused here."""
    stamps = g.get("access_stamps")
    if stamps and any(stamp is not ANY and stamp != generation for stamp in stamps):
        _authenticate(resources(), generation)


def _remembered(res, digest, load, generation):
    stamp, value = res.tenant_ids.stamped(digest, load, generation)
    g.access_stamps.append(stamp)
    return value


def _authenticate(res, generation) -> None:
    g.access_stamps = []
    if res.settings.auth == "disabled":
        g.tenant_id = res.tenant_ids.tenant_id(DEFAULT_TENANT, lambda: _default_tenant_id(res))
        g.principal, g.actor = Principal(tenant_id=g.tenant_id), "auth-disabled"
        return
    header = request.headers.get("Authorization", "")
    scheme, _, key = header.partition(" ")
    if not header and "access_token" not in request.args \
            and request.cookies.get(SESSION_COOKIE):
        _authenticate_session(res, request.cookies[SESSION_COOKIE], generation)
        return
    if not key and "access_token" in request.args:
        if not _accepts_query_token():
            raise Unauthorized("?access_token= is accepted only on GET of event streams and "
                               "report links; send your API key as 'Authorization: Bearer "
                               "<key>'.")
        scheme, key = "bearer", request.args["access_token"]
    if scheme.lower() != "bearer" or not key.strip():
        raise Unauthorized("Send your API key as 'Authorization: Bearer <key>'.")
    key = key.strip()
    grant: KeyGrant | None = _remembered(res, hash_key(key), lambda: _key_grant(res, key),
                                         generation)
    if grant is None:
        raise InvalidKey("The API key is unknown or revoked.")
    g.tenant_id = grant.tenant_id
    acting = request.headers.get(USER_HEADER)
    if grant.user_id is not None:
        if acting is not None:
            raise Forbidden(f"A personal key acts only as its own user; {USER_HEADER} is "
                            "for service keys with the act_as scope.")
        principal = _user_principal(res, grant.tenant_id, grant.user_id, grant.scopes,
                                    generation)
    elif acting is not None:
        if "act_as" not in grant.scopes:
            raise Forbidden(f"{USER_HEADER} needs a key with the act_as scope; this key "
                            f"has {', '.join(sorted(grant.scopes))}.")
        principal = _acting_principal(res, grant, acting, generation)
    else:
        g.principal, g.actor = Principal(tenant_id=grant.tenant_id, scopes=grant.scopes), \
            f"key:{grant.prefix}"
        return
    g.principal, g.actor = principal, f"user:{principal.external_id}"


def _authenticate_session(res, token: str, generation) -> None:
    tenant_id, user_id = session_user(token)
    principal = _user_principal(res, tenant_id, user_id, SCOPES - {"act_as"}, generation)
    g.tenant_id, g.principal, g.actor = tenant_id, principal, f"user:{principal.external_id}"


def _user_principal(res, tenant_id: int, user_id: int, scopes: frozenset[str],
                    generation) -> Principal:
    def load() -> Principal | None:
        with res.session() as s:
            user = s.get(User, user_id)
            return None if user is None or user.tenant_id != tenant_id or user.disabled \
                else principal_for_user(user, scopes)

    principal = _remembered(res, ("user", tenant_id, user_id, scopes), load, generation)
    if principal is None:
        raise Forbidden("This user is disabled or deleted.")
    return principal


def _acting_principal(res, grant: KeyGrant, external_id: str, generation) -> Principal:
    try:
        check_external_id(external_id)
    except ValidationFailed as exc:
        raise Forbidden(f"{USER_HEADER}: {exc.detail}") from None
    scopes = grant.scopes - {"act_as"}

    def load() -> Principal | None:
        with res.session() as s:
            user = s.scalar(select(User).where(User.tenant_id == grant.tenant_id,
                                               User.external_id == external_id))
            if user is None:
                policy = s.scalar(select(Tenant.unknown_users)
                                  .where(Tenant.id == grant.tenant_id))
                if policy == "refuse":
                    raise Forbidden(f"No user {external_id!r} in this tenant, and it does "
                                    "not create users on first use.")
                user = upsert_user(s, grant.tenant_id, external_id=external_id, email=None,
                                   role="viewer", groups=())
            return None if user.disabled else principal_for_user(user, scopes)

    principal = _remembered(res, ("acting", grant.tenant_id, external_id, scopes), load,
                            generation)
    if principal is None:
        raise Forbidden(f"User {external_id!r} is disabled.")
    return principal


def _key_grant(res, key: str) -> KeyGrant | None:
    # On the DBAPI cursor (shared/driver_sql.py): the cache's misses are on every
    # request path, a tenant's first request in each key_cache_s window.
    with res.driver.begin() as conn:
        return grant_for_key(conn, key)


def _default_tenant_id(res) -> int:
    with res.session() as s:
        return get_or_create_tenant(s, DEFAULT_TENANT).id


def _accepts_query_token() -> bool:
    view = current_app.view_functions.get(request.endpoint or "")
    return request.method in ("GET", "HEAD") and getattr(view, "accepts_query_token", False)
