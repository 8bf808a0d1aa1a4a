"""Who a request or a job acts for: one tenant and at most one user.

A ``Principal`` is what authorization (``api/``) and row policies (``engine/``) read; it
is built once per request from the API key (and ``Sunrise-User`` or the console's
session), and once per job from the job's row (``principal_for_job``). A service key
acting without a user acts for the tenant as an owner with the key's scopes.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

ROLES = ("viewer", "analyst", "admin", "owner")
SCOPES = frozenset({"ask", "datasets", "admin", "act_as"})


@dataclass(frozen=True)
class Principal:
    tenant_id: int
    user_id: int | None = None
    external_id: str | None = None
    role: str = "owner"
    groups: tuple[str, ...] = ()
    attributes: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    scopes: frozenset[str] = SCOPES

    @property
    def is_admin(self) -> bool:
        return self.role in ("admin", "owner")

    def at_least(self, role: str) -> bool:
        return ROLES.index(self.role) >= ROLES.index(role)


def principal_for_job(session, job) -> Principal:
    """The principal a job runs for: its user's (role, groups and attributes as they are
    now, read in ``session``), or its tenant's when it has no user. A job whose user has
    since been deleted or disabled runs as a viewer with no groups or attributes: it can
    see no more than the least a user may (row policies then deny what needs them)."""
    user_id = getattr(job, "user_id", None)
    if user_id is None:
        return Principal(tenant_id=job.tenant_id)
    from shared.models import User  # shared.models is heavier than this module's users
    from shared.people import principal_for_user

    user = session.get(User, user_id)
    if user is None or user.tenant_id != job.tenant_id or user.disabled:
        return Principal(tenant_id=job.tenant_id, user_id=user_id, role="viewer",
                         scopes=frozenset({"ask"}))
    return principal_for_user(user, frozenset({"ask"}))
