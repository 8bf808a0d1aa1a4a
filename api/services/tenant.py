"""Tenant use cases: read the tenant with its settings and spend, change its settings."""
from __future__ import annotations

import logging
from typing import Any

from sqlalchemy.orm import Session

from api.schemas.tenant import TenantPatch
from shared.audit import record
from shared.budgets import budget_view, set_budget
from shared.errors import Forbidden
from shared.models import Tenant
from shared.principal import Principal

logger = logging.getLogger(__name__)


def tenant_view(session: Session, tenant_id: int) -> dict[str, Any]:
    """The tenant's id, name, ``unknown_users``, budget (or None) and spend this UTC day
    and month."""
    tenant = session.get(Tenant, tenant_id)
    return {"tenant_id": tenant.id, "name": tenant.name,
            "unknown_users": tenant.unknown_users, **budget_view(session, tenant_id)}


def update_tenant(session: Session, principal: Principal, body: TenantPatch,
                  actor: str) -> dict[str, Any]:
    """Apply the settings ``body`` holds and audit them (``tenant.update``, each changed
    setting before and after); returns the tenant's view.

    The budget is for owners, ``unknown_users`` for admins and owners, both through a key
    with the ``admin`` scope (a tenant key made for asking acts as the owner with only
    its own scopes). Raises Forbidden, changing nothing, for anyone else."""
    given = body.model_fields_set
    if "budget" in given and not (principal.role == "owner" and "admin" in principal.scopes):
        raise Forbidden("Only the tenant's owners, with a key that has the 'admin' scope, may "
                        "change its budget.")
    if "unknown_users" in given and not (principal.is_admin and "admin" in principal.scopes):
        raise Forbidden("Only admins and owners, with a key that has the 'admin' scope, may "
                        "change unknown_users.")
    before = tenant_view(session, principal.tenant_id)
    if "budget" in given:
        set_budget(session, principal.tenant_id,
                   None if body.budget is None else body.budget.model_dump())
    if "unknown_users" in given:
        session.get(Tenant, principal.tenant_id).unknown_users = body.unknown_users
    session.flush()
    after = tenant_view(session, principal.tenant_id)
    record(session, principal.tenant_id, "tenant.update", actor=actor,
           user_id=principal.user_id, target=str(principal.tenant_id),
           details={"before": {name: before[name] for name in sorted(given)},
                    "after": {name: after[name] for name in sorted(given)}})
    logger.info("tenant %s settings changed: %s", principal.tenant_id,
                {name: after[name] for name in sorted(given)})
    return after
