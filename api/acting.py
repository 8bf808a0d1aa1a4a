"""Who the current request acts for, read in one place.

``api/auth.py`` authenticates the request and may set ``g.principal`` (a user acting
through a key, a console session); every view and service that needs to know *who* asks
calls ``current_principal()`` rather than reading ``g`` itself. Without a user the
request acts for its tenant with full scope, as a tenant key always has.
"""
from __future__ import annotations

from flask import g

from shared.principal import Principal


def current_principal() -> Principal:
    principal = g.get("principal")
    if principal is None:
        principal = Principal(tenant_id=g.tenant_id)
        g.principal = principal
    return principal
