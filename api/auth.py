"""Bearer-key authentication; every /v1 request runs as exactly one tenant."""
from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from flask import current_app, g, request

from api.resources import resources
from shared.errors import InvalidKey, Unauthorized
from shared.keys import get_or_create_tenant, hash_key, tenant_id_for_key

DEFAULT_TENANT = "default"

V = TypeVar("V", bound=Callable)


def accepts_query_token(view: V) -> V:
    """Mark a GET view that may be authenticated by ``?access_token=``: EventSource and
    report links cannot send headers. Put it below the route decorator."""
    view.accepts_query_token = True  # type: ignore[attr-defined]
    return view


def authenticate() -> None:
    """``before_request`` hook: sets ``g.tenant_id`` or raises Unauthorized (401).

    The key comes from ``Authorization: Bearer``, or from ``?access_token=`` on the GET
    views marked ``accepts_query_token`` only: a key in a URL ends up in logs and
    histories, which is acceptable for a read-only link and not for a change. A key
    found valid is remembered for ``key_cache_s`` seconds (``api/tenant_cache.py``).
    """
    res = resources()
    if res.settings.auth == "disabled":
        g.tenant_id = res.tenant_ids.tenant_id(DEFAULT_TENANT, lambda: _default_tenant_id(res))
        return
    header = request.headers.get("Authorization", "")
    scheme, _, key = header.partition(" ")
    if not key and "access_token" in request.args:
        if not _accepts_query_token():
            raise Unauthorized("?access_token= is accepted only on GET of event streams and "
                               "report links; send your API key as 'Authorization: Bearer "
                               "<key>'.")
        scheme, key = "bearer", request.args["access_token"]
    if scheme.lower() != "bearer" or not key.strip():
        raise Unauthorized("Send your API key as 'Authorization: Bearer <key>'.")
    key = key.strip()
    tenant_id = res.tenant_ids.tenant_id(hash_key(key), lambda: _key_owner(res, key))
    if tenant_id is None:
        raise InvalidKey("The API key is unknown or revoked.")
    g.tenant_id = tenant_id


def _key_owner(res, key: str) -> int | None:
    # On the DBAPI cursor (shared/driver_sql.py): the cache's misses are on every
    # request path, a tenant's first request in each key_cache_s window.
    with res.driver.begin() as conn:
        return tenant_id_for_key(conn, key)


def _default_tenant_id(res) -> int:
    with res.session() as s:
        return get_or_create_tenant(s, DEFAULT_TENANT).id


def _accepts_query_token() -> bool:
    view = current_app.view_functions.get(request.endpoint or "")
    return request.method in ("GET", "HEAD") and getattr(view, "accepts_query_token", False)
