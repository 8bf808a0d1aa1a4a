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
    """The principal a job runs for. Jobs carry no user yet: each acts for its tenant."""
    return Principal(tenant_id=job.tenant_id)
