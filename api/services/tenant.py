"""Tenant use cases: read the tenant with its budget and spend, change its budget."""
from __future__ import annotations

import logging
from typing import Any

from sqlalchemy.orm import Session

from api.schemas.tenant import TenantPatch
from shared.budgets import budget_view, set_budget
from shared.errors import Forbidden
from shared.models import Tenant
from shared.principal import Principal

logger = logging.getLogger(__name__)


def tenant_view(session: Session, tenant_id: int) -> dict[str, Any]:
    """The tenant's id, name, budget (or None) and spend this UTC day and month."""
    tenant = session.get(Tenant, tenant_id)
    return {"tenant_id": tenant.id, "name": tenant.name, **budget_view(session, tenant_id)}


def update_tenant(session: Session, principal: Principal, body: TenantPatch) -> dict[str, Any]:
    """Apply ``body`` (the budget) for an owner; raises Forbidden for anyone else."""
    if principal.role != "owner":
        raise Forbidden("Only the tenant's owners may change its budget.")
    budget = None if body.budget is None else body.budget.model_dump()
    set_budget(session, principal.tenant_id, budget)
    session.flush()
    logger.info("tenant %s budget set to %s", principal.tenant_id, budget)
    return tenant_view(session, principal.tenant_id)
