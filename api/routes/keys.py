"""/v1/keys: the tenant's API keys, listed and revoked (any key of the tenant may)."""
from __future__ import annotations

from flask import Blueprint, Response, g

from api.audit_trail import note
from api.auth import authenticate
from api.authz import requiring
from api.limits import limit_requests
from api.resources import resources
from api.schemas.keys import KeyList
from api.services.keys import revoke_tenant_key, tenant_keys
from api.spec import spec
from shared.access_generation import bump

bp = Blueprint("keys", __name__, url_prefix="/v1/keys")
bp.before_request(authenticate)
bp.before_request(limit_requests)
bp.before_request(requiring(role="admin", scope="admin"))


@spec.doc("GET", "/v1/keys", "Your API keys (never the keys themselves), revoked ones "
          "included.", responses={200: KeyList}, tag="keys")
@bp.get("")
def list_keys():
    res = resources()
    with res.session() as s:
        return tenant_keys(s, g.tenant_id, res.settings.key_cache_s)


@spec.doc("DELETE", "/v1/keys/{key_id}", "Revoke one of your keys (it may be the one you "
          "send). Every API process refuses it from the next request (within key_cache_s "
          "seconds should Redis be unreachable).", responses={204: None, 409: None},
          tag="keys")
@bp.delete("/<key_id>")
def revoke_key(key_id: str):
    res = resources()
    with res.session() as s:
        revoke_tenant_key(s, g.tenant_id, key_id)
    bump(res.redis, g.tenant_id)
    note("key.revoke", key_id)
    return Response(status=204)
