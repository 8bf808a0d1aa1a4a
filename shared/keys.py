"""API keys: shown once at creation, stored only as a SHA-256 hash."""
from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from shared.driver_sql import DriverConnection
from shared.models import ApiKey, Tenant, utcnow
from shared.principal import SCOPES

KEY_PREFIX = "sk-sunrise-"


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def get_or_create_tenant(session: Session, name: str) -> Tenant:
    tenant = session.scalar(select(Tenant).where(Tenant.name == name))
    if tenant is None:
        tenant = Tenant(name=name)
        session.add(tenant)
        session.flush()
    return tenant


def create_key(session: Session, tenant_name: str, *,
               scopes: Iterable[str] | None = None, user_id: int | None = None) -> str:
    """Create a key for ``tenant_name`` (creating the tenant if new); returns the key.
    ``scopes`` None gives every scope (as keys made before scopes have); ``user_id``
    makes it that user's personal key. Raises ValueError on an unknown scope."""
    chosen = SCOPES if scopes is None else frozenset(scopes)
    if not chosen or chosen - SCOPES:
        raise ValueError(f"scopes must be some of {', '.join(sorted(SCOPES))}")
    tenant = get_or_create_tenant(session, tenant_name)
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    session.add(ApiKey(tenant_id=tenant.id, key_hash=hash_key(key), prefix=key[:16],
                       scopes=sorted(chosen), user_id=user_id))
    session.flush()
    return key


def tenant_for_key(session: Session, key: str) -> Tenant | None:
    """The tenant owning an unrevoked ``key``, or None. Compares hashes in constant time."""
    digest = hash_key(key)
    row = session.execute(
        select(ApiKey, Tenant).join(Tenant, Tenant.id == ApiKey.tenant_id)
        .where(ApiKey.key_hash == digest, ApiKey.revoked_at.is_(None))
    ).first()
    if row is None or not hmac.compare_digest(row.ApiKey.key_hash, digest):
        return None
    return row.Tenant


def tenant_id_for_key(session: Session | DriverConnection, key: str) -> int | None:
    """The id of the tenant owning an unrevoked ``key``, or None: what every request's
    authentication needs, read without loading ORM objects (on a session, or a
    ``shared.driver_sql`` connection). Compares in constant time."""
    digest = hash_key(key)
    row = session.execute(_KEY_OWNER, {"digest": digest}).first()
    if row is None or not hmac.compare_digest(row.key_hash, digest):
        return None
    return row.tenant_id


@dataclass(frozen=True)
class KeyGrant:
    """What an unrevoked key lets a request do: its tenant, scopes, and the user it
    belongs to (None: a service key)."""

    tenant_id: int
    prefix: str
    scopes: frozenset[str]
    user_id: int | None


def grant_for_key(session: Session | DriverConnection, key: str) -> KeyGrant | None:
    """The grant of an unrevoked ``key``, or None; read like ``tenant_id_for_key``. A key
    without stored scopes (none given) has every scope."""
    digest = hash_key(key)
    row = session.execute(_KEY_GRANT, {"digest": digest}).first()
    if row is None or not hmac.compare_digest(row.key_hash, digest):
        return None
    scopes = row.scopes
    if isinstance(scopes, str | bytes):  # the DBAPI cursor returns JSON undecoded
        scopes = json.loads(scopes)
    return KeyGrant(row.tenant_id, row.prefix,
                    SCOPES if scopes is None else frozenset(scopes) & SCOPES, row.user_id)


# Built once: every authenticated request runs it.
_C = ApiKey.__table__.c
_KEY_OWNER = (select(_C.key_hash, _C.tenant_id)
              .where(_C.key_hash == bindparam("digest"), _C.revoked_at.is_(None)))
_KEY_GRANT = (select(_C.key_hash, _C.tenant_id, _C.prefix, _C.scopes, _C.user_id)
              .where(_C.key_hash == bindparam("digest"), _C.revoked_at.is_(None)))


def list_keys(session: Session, tenant_id: int) -> list[ApiKey]:
    """Every key of ``tenant_id``, revoked ones included, oldest first. Read-only."""
    return list(session.scalars(select(ApiKey).where(ApiKey.tenant_id == tenant_id)
                                .order_by(ApiKey.id)))


def revoke_key(session: Session, key_id: int, tenant_id: int | None = None) -> ApiKey | None:
    """Mark key ``key_id`` revoked (``revoked_at`` now; a key already revoked keeps its
    first time) and return it; None, changing nothing, if there is no such key or it is
    not ``tenant_id``'s (when given). API processes that used the key in the last
    ``key_cache_s`` seconds may accept it until their cache forgets it
    (``api/tenant_cache.py``)."""
    key = session.get(ApiKey, key_id)
    if key is None or (tenant_id is not None and key.tenant_id != tenant_id):
        return None
    if key.revoked_at is None:
        key.revoked_at = utcnow()
        session.flush()
    return key
