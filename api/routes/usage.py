"""GET /v1/usage: the caller's tokens and cost, grouped by day, model or tenant."""
from __future__ import annotations

from flask import Blueprint, g

from api.auth import authenticate
from api.authz import requiring
from api.limits import limit_requests
from api.request_parsing import parse_query
from api.resources import resources
from api.schemas.usage import UsageOut, UsageQuery
from api.services.usage import usage_report
from api.spec import spec

bp = Blueprint("usage", __name__, url_prefix="/v1/usage")
bp.before_request(authenticate)
bp.before_request(limit_requests)
bp.before_request(requiring(role="admin"))


@spec.doc("GET", "/v1/usage", "Your tokens and cost, grouped by day, model or tenant.",
          query=UsageQuery, responses={200: UsageOut}, tag="usage")
@bp.get("")
def get_usage():
    query = parse_query(UsageQuery)
    with resources().session() as s:
        return usage_report(s, g.tenant_id, query.group_by, query.start(), query.end())
