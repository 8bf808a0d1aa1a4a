"""/v1/audit: the tenant's append-only audit log (admins and owners)."""
from __future__ import annotations

import datetime as dt

from flask import Blueprint, g

from api.auth import authenticate
from api.authz import requiring
from api.limits import limit_requests
from api.request_parsing import parse_query
from api.resources import resources
from api.schemas.users import AuditList, AuditQuery
from api.spec import spec
from shared.audit import entries, entry_view
from shared.errors import ValidationFailed
from shared.people import user_by_external_id

bp = Blueprint("audit", __name__, url_prefix="/v1/audit")
bp.before_request(authenticate)
bp.before_request(limit_requests)
bp.before_request(requiring(role="admin", scope="admin"))


def _instant(value: str | None, name: str) -> dt.datetime | None:
    if value is None:
        return None
    try:
        moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ValidationFailed(f"{name} must be an ISO 8601 date or time, not "
                               f"{value[:40]!r}.") from None
    return moment.astimezone(dt.UTC).replace(tzinfo=None) if moment.tzinfo else moment


@spec.doc("GET", "/v1/audit", "Audit entries in the order written, filtered by time "
          "(from, to), user (external id) and action; cursor pagination.",
          query=AuditQuery, responses={200: AuditList}, tag="users")
@bp.get("")
def list_audit():
    query = parse_query(AuditQuery)
    since, until = _instant(query.from_, "from"), _instant(query.to, "to")
    with resources().session() as s:
        user_id = None
        if query.user is not None:
            user = user_by_external_id(s, g.tenant_id, query.user)
            if user is None:
                return {"items": [], "next_cursor": None}
            user_id = user.id
        rows = entries(s, g.tenant_id, since=since, until=until, user_id=user_id,
                       action=query.action, limit=query.limit + 1,
                       after_id=int(query.cursor) if query.cursor else None)
        shown = rows[:query.limit]
        return {"items": [entry_view(e) for e in shown],
                "next_cursor": str(shown[-1].id) if len(rows) > query.limit else None}
