"""People in tests: a tenant's id from its key, users and keys made in the database."""
from __future__ import annotations

from shared.db import session_scope
from shared.keys import create_key, grant_for_key
from shared.models import Tenant
from shared.people import upsert_user


def tenant_of(settings, key: str) -> tuple[int, str]:
    """(tenant id, tenant name) of ``key``."""
    with session_scope(settings.database_url) as s:
        grant = grant_for_key(s, key)
        return grant.tenant_id, s.get(Tenant, grant.tenant_id).name


def make_user(settings, tenant_id: int, external_id: str, role: str = "viewer",
              groups=(), attributes=None) -> int:
    with session_scope(settings.database_url) as s:
        return upsert_user(s, tenant_id, external_id=external_id, email=None, role=role,
                           groups=groups, attributes=attributes).id


def key_for(settings, tenant_name: str, *, scopes=None, user_id: int | None = None) -> dict:
    with session_scope(settings.database_url) as s:
        return {"Authorization": f"Bearer {create_key(s, tenant_name, scopes=scopes, user_id=user_id)}"}


def acting(auth: dict, external_id: str) -> dict:
    return {**auth, "Sunrise-User": external_id}


def team(settings, auth: dict) -> tuple[int, str, dict[str, int]]:
    """(tenant id, tenant name, user ids by external id) for ``auth``'s tenant with two
    analysts ``ann`` and ``bob``, a viewer ``vic`` and an admin ``ada``."""
    tenant_id, name = tenant_of(settings, auth["Authorization"].split()[1])
    ids = {ext: make_user(settings, tenant_id, ext, role) for ext, role in
           [("ann", "analyst"), ("bob", "analyst"), ("vic", "viewer"), ("ada", "admin")]}
    return tenant_id, name, ids
