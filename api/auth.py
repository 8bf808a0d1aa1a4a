"""Bearer-key authentication; every /v1 request runs as exactly one tenant."""
from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from flask import current_app, g, request

from api.resources import resources
from shared.errors import InvalidKey, Unauthorized
from shared.keys import get_or_create_tenant, tenant_id_for_key

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
    histories, which is acceptable for a read-only link and not for a change.
    """
    res = resources()
    if res.settings.auth == "disabled":
        with res.session() as s:
            g.tenant_id = get_or_create_tenant(s, DEFAULT_TENANT).id
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
    with res.session() as s:
        tenant_id = tenant_id_for_key(s, key.strip())
    if tenant_id is None:
        raise InvalidKey("The API key is unknown or revoked.")
    g.tenant_id = tenant_id


def _accepts_query_token() -> bool:
    view = current_app.view_functions.get(request.endpoint or "")
    return request.method in ("GET", "HEAD") and getattr(view, "accepts_query_token", False)
