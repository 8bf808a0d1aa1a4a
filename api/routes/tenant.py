"""/v1/tenant: the caller's tenant, its settings (cost budget, unknown users) and its
spend."""
from __future__ import annotations

from flask import Blueprint, g

from api.acting import current_principal
from api.auth import authenticate
from api.authz import actor
from api.limits import limit_requests
from api.request_parsing import parse_body
from api.resources import resources
from api.schemas.tenant import TenantOut, TenantPatch
from api.services.tenant import tenant_view, update_tenant
from api.spec import spec

bp = Blueprint("tenant", __name__, url_prefix="/v1/tenant")
bp.before_request(authenticate)
bp.before_request(limit_requests)


@spec.doc("GET", "/v1/tenant", "Your tenant: what an unknown Sunrise-User does, its cost "
          "budget and its spend this UTC day and month.", responses={200: TenantOut},
          tag="tenant")
@bp.get("")
def get_tenant():
    with resources().session() as s:
        return tenant_view(s, g.tenant_id)


@spec.doc("PATCH", "/v1/tenant", "Set or remove the cost budget (owners only); set "
          "unknown_users, create or refuse (admins and owners); either needs the admin scope. Each change is audited "
          "(tenant.update).", body=TenantPatch, responses={200: TenantOut, 403: None},
          tag="tenant")
@bp.patch("")
def patch_tenant():
    body = parse_body(TenantPatch)
    with resources().session() as s:
        return update_tenant(s, current_principal(), body, actor())
