"""The tenant's API keys: list and revoke.

Today every key is a full-power key of its tenant (users and roles come later), so a
tenant's "admin" is any of its keys: each may list and revoke all the tenant's keys,
itself included. Another tenant's key is never shown and revoking it is 404.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from shared.errors import NotFound
from shared.keys import list_keys, revoke_key
from shared.models import ApiKey


def key_view(key: ApiKey) -> dict[str, Any]:
    """A key's public JSON: never the key nor its hash."""
    return {"key_id": str(key.id), "prefix": key.prefix,
            "created_at": key.created_at.isoformat() if key.created_at else None,
            "revoked_at": key.revoked_at.isoformat() if key.revoked_at else None}


def tenant_keys(session: Session, tenant_id: int, key_cache_s: float) -> dict[str, Any]:
    """``tenant_id``'s keys, oldest first, and the revocation window. Read-only."""
    return {"items": [key_view(k) for k in list_keys(session, tenant_id)],
            "key_cache_s": key_cache_s}


def revoke_tenant_key(session: Session, tenant_id: int, key_id: str) -> None:
    """Revoke ``tenant_id``'s key ``key_id``; NotFound if it is not one of its keys."""
    key = revoke_key(session, int(key_id), tenant_id) if key_id.isdigit() else None
    if key is None:
        raise NotFound(f"You have no key {key_id!r}.")
