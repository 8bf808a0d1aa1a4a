"""Bearer-key authentication; every /v1 request runs as exactly one tenant."""
from __future__ import annotations

from flask import g, request

from api.context import services
from shared.errors import Unauthorized
from shared.keys import get_or_create_tenant, tenant_id_for_key

DEFAULT_TENANT = "default"


def authenticate() -> None:
    """``before_request`` hook: sets ``g.tenant_id`` or raises Unauthorized (401).

    The key comes from ``Authorization: Bearer``; EventSource and report links cannot
    send headers, so ``?access_token=`` is accepted too.
    """
    svc = services()
    if svc.settings.auth == "disabled":
        with svc.session() as s:
            g.tenant_id = get_or_create_tenant(s, DEFAULT_TENANT).id
        return
    header = request.headers.get("Authorization", "")
    scheme, _, key = header.partition(" ")
    if not key and "access_token" in request.args:
        scheme, key = "bearer", request.args["access_token"]
    if scheme.lower() != "bearer" or not key.strip():
        raise Unauthorized("Send your API key as 'Authorization: Bearer <key>'.",
                           headers={"WWW-Authenticate": 'Bearer realm="sunrise"'})
    with svc.session() as s:
        tenant_id = tenant_id_for_key(s, key.strip())
    if tenant_id is None:
        raise Unauthorized("The API key is unknown or revoked.",
                           headers={"WWW-Authenticate": 'Bearer error="invalid_token"'})
    g.tenant_id = tenant_id
