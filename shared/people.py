"""A tenant's users: created, provisioned from an identity provider, read as principals.

One owner for a user's shape: the role is one of ``shared.principal.ROLES``, ``groups``
a list of strings, ``attributes`` a flat mapping of strings, numbers or lists of them
(row policies bind them as literals). Every writer validates through here, so a value
the API, the CLI and OIDC provisioning store is always one the policies can read.
"""
from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping
from datetime import timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from shared.errors import ValidationFailed
from shared.keys import hash_key
from shared.models import SignInLink, Tenant, User, utcnow
from shared.principal import ROLES, SCOPES, Principal

SIGN_IN_LINK_TTL_S = 24 * 3600
# What ``Sunrise-User: <external id nobody has>`` does, as ``tenants.unknown_users``
# stores it: "create" the user as a viewer, or "refuse" (403).
UNKNOWN_USERS = ("create", "refuse")
MAX_GROUPS = 100
MAX_TEXT = 200


def check_role(role: str) -> str:
    if role not in ROLES:
        raise ValidationFailed(f"role must be one of {', '.join(ROLES)}, not {role!r}.")
    return role


def check_groups(groups: Iterable[str] | None) -> list[str]:
    values = list(groups or [])
    if len(values) > MAX_GROUPS or not all(
            isinstance(g, str) and 0 < len(g) <= MAX_TEXT for g in values):
        raise ValidationFailed(f"groups must be at most {MAX_GROUPS} non-empty strings of "
                               f"at most {MAX_TEXT} characters.")
    return sorted(set(values))


def _scalar_ok(value: Any) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)) or (
        isinstance(value, str) and len(value) <= MAX_TEXT)


def check_attributes(attributes: Mapping[str, Any] | None) -> dict[str, Any]:
    values = dict(attributes or {})
    for name, value in values.items():
        ok = isinstance(name, str) and name.isidentifier() and len(name) <= 64 and (
            _scalar_ok(value) or (isinstance(value, list) and len(value) <= MAX_GROUPS
                                  and all(_scalar_ok(v) for v in value)))
        if not ok:
            raise ValidationFailed(
                f"attribute {str(name)[:64]!r}: names are identifiers; values are strings, "
                "numbers or lists of them.")
    return values


def check_external_id(external_id: str) -> str:
    if not isinstance(external_id, str) or not 0 < len(external_id) <= MAX_TEXT \
            or not external_id.isprintable():
        raise ValidationFailed(f"external_id must be 1-{MAX_TEXT} printable characters.")
    return external_id


def check_email(email: str | None) -> str | None:
    if email is None:
        return None
    if not isinstance(email, str) or len(email) > 320 or email.count("@") != 1 \
            or not email.isprintable() or " " in email:
        raise ValidationFailed("email must be one address such as name@example.com.")
    return email.lower()


def user_by_external_id(session: Session, tenant_id: int, external_id: str) -> User | None:
    return session.scalar(select(User).where(User.tenant_id == tenant_id,
                                             User.external_id == external_id))


def upsert_user(session: Session, tenant_id: int, *, external_id: str, email: str | None,
                role: str, groups: Iterable[str] | None,
                attributes: Mapping[str, Any] | None = None) -> User:
    """The user ``external_id`` of ``tenant_id``, created or updated to the values given
    (``attributes`` None keeps the stored ones) and flushed. Raises ValidationFailed on
    a value outside the user's shape; the caller's transaction decides the rest."""
    user = user_by_external_id(session, tenant_id, check_external_id(external_id))
    if user is None:
        user = User(tenant_id=tenant_id, external_id=external_id, attributes={})
        session.add(user)
    user.email = check_email(email)
    user.role = check_role(role)
    user.groups = check_groups(groups)
    if attributes is not None:
        user.attributes = check_attributes(attributes)
    session.flush()
    return user


def principal_for_user(user: User, scopes: frozenset[str] = SCOPES) -> Principal:
    """What a request or job acting as ``user`` may do (the key's ``scopes``)."""
    return Principal(tenant_id=user.tenant_id, user_id=user.id, external_id=user.external_id,
                     role=user.role, groups=tuple(user.groups or ()),
                     attributes=dict(user.attributes or {}), scopes=scopes)


def tenant_by_name(session: Session, name: str) -> Tenant | None:
    return session.scalar(select(Tenant).where(Tenant.name == name))


def create_sign_in_link(session: Session, user: User) -> str:
    """A one-time sign-in token for ``user`` (valid a day); only its hash is stored."""
    token = secrets.token_urlsafe(32)
    now = utcnow()
    session.add(SignInLink(token_hash=hash_key(token), tenant_id=user.tenant_id,
                           user_id=user.id, created_at=now,
                           expires_at=now + timedelta(seconds=SIGN_IN_LINK_TTL_S)))
    session.flush()
    return token


def redeem_sign_in_link(session: Session, token: str) -> User | None:
    """The user of an unused, unexpired link ``token``, marking it used; else None."""
    link = session.scalar(select(SignInLink).where(SignInLink.token_hash == hash_key(token))
                          .with_for_update())
    if link is None or link.used_at is not None or link.expires_at < utcnow():
        return None
    link.used_at = utcnow()
    user = session.get(User, link.user_id)
    if user is None or user.disabled:
        return None
    session.flush()
    return user
