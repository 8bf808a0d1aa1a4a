"""The tenant's API keys: list and revoke.

Listing and revoking are for the tenant's admins and owners with the ``admin`` scope
(``api/routes/keys.py``; a full-scope service key is an owner): each may list and revoke
all the tenant's keys, itself included. Another tenant's key is never shown and revoking
it is 404.

A key's public id is its prefix (its first 16 characters, 5 of them random), not the
row's number: a number is guessable, so a client trying ids (a fuzzer, a script's bug)
would revoke the tenant's own keys one by one.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from shared.errors import Conflict, NotFound
from shared.keys import list_keys, revoke_key
from shared.models import ApiKey


def key_view(key: ApiKey) -> dict[str, Any]:
    """A key's public JSON: never the key nor its hash."""
    return {"id": key.prefix, "prefix": key.prefix,
            "created_at": key.created_at.isoformat() if key.created_at else None,
            "revoked_at": key.revoked_at.isoformat() if key.revoked_at else None}


def tenant_keys(session: Session, tenant_id: int, key_cache_s: float) -> dict[str, Any]:
    """``tenant_id``'s keys, oldest first, and the revocation window. Read-only."""
    return {"items": [key_view(k) for k in list_keys(session, tenant_id)],
            "key_cache_s": key_cache_s}


def revoke_tenant_key(session: Session, tenant_id: int, key_id: str) -> None:
    """Revoke ``tenant_id``'s key ``key_id``; NotFound if it is not one of its keys."""
    matches = [k for k in list_keys(session, tenant_id) if k.prefix == key_id]
    if not matches:
        raise NotFound(f"You have no key {key_id!r}.")
    if len(matches) > 1:
        raise Conflict(f"{len(matches)} of your keys start with {key_id!r}; an operator "
                       "revokes one by number with `sunrise keys revoke`.")
    revoke_key(session, matches[0].id, tenant_id)
