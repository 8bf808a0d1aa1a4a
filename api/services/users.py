"""Users of a tenant, managed by its admins and owners; every change is audited.

An admin manages users below owner: an owner (or the owner role) is managed by owners
only. A service key acting for no one counts as an owner.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from api.schemas.users import UserCreate, UserPatch
from shared.audit import record
from shared.errors import Conflict, Forbidden, NotFound
from shared.models import User, iso
from shared.people import (
    check_attributes,
    check_email,
    check_groups,
    check_role,
    upsert_user,
    user_by_external_id,
)
from shared.principal import Principal


def user_view(user: User) -> dict[str, Any]:
    return {"user_id": user.id, "external_id": user.external_id, "email": user.email,
            "role": user.role, "groups": list(user.groups or []),
            "attributes": dict(user.attributes or {}), "disabled": bool(user.disabled),
            "created_at": iso(user.created_at)}


def _may_manage(principal: Principal, role: str) -> None:
    if role == "owner" and principal.role != "owner":
        raise Forbidden("Only owners manage owners.")


def load_user(s: Session, principal: Principal, user_id: int) -> User:
    user = s.get(User, user_id)
    if user is None or user.tenant_id != principal.tenant_id:
        raise NotFound(f"No user {user_id}.")
    return user


def list_users(s: Session, tenant_id: int, *, limit: int, cursor: str | None) -> dict:
    """One page of users in order of id; ``next_cursor`` is the last id shown."""
    query = select(User).where(User.tenant_id == tenant_id)
    if cursor is not None:
        query = query.where(User.id > int(cursor))
    rows = list(s.scalars(query.order_by(User.id).limit(limit + 1)))
    shown = rows[:limit]
    return {"items": [user_view(u) for u in shown],
            "next_cursor": str(shown[-1].id) if len(rows) > limit else None}


def create_user(s: Session, principal: Principal, body: UserCreate, actor: str) -> dict:
    """Create a user; Conflict if the external id or email is taken in the tenant."""
    _may_manage(principal, body.role)
    if user_by_external_id(s, principal.tenant_id, body.external_id) is not None:
        raise Conflict(f"A user {body.external_id!r} exists already.")
    try:
        with s.begin_nested():
            user = upsert_user(s, principal.tenant_id, external_id=body.external_id,
                               email=body.email, role=body.role, groups=body.groups,
                               attributes=body.attributes)
    except IntegrityError:
        raise Conflict(f"A user with email {body.email!r} exists already.") from None
    view = user_view(user)
    record(s, principal.tenant_id, "user.create", actor=actor, user_id=principal.user_id,
           target=str(user.id), details=view)
    return view


def update_user(s: Session, principal: Principal, user_id: int, body: UserPatch,
                actor: str) -> dict:
    user = load_user(s, principal, user_id)
    _may_manage(principal, user.role)
    given = body.model_fields_set
    before = user_view(user)
    if "role" in given and body.role is not None:
        _may_manage(principal, body.role)
        user.role = check_role(body.role)
    if "email" in given:
        user.email = check_email(body.email)
    if "groups" in given:
        user.groups = check_groups(body.groups)
    if "attributes" in given:
        user.attributes = check_attributes(body.attributes)
    if "disabled" in given and body.disabled is not None:
        user.disabled = body.disabled
    try:
        with s.begin_nested():
            s.flush()
    except IntegrityError:
        raise Conflict(f"A user with email {body.email!r} exists already.") from None
    view = user_view(user)
    record(s, principal.tenant_id, "user.update", actor=actor, user_id=principal.user_id,
           target=str(user.id), details={"before": before, "after": view})
    return view


def delete_user(s: Session, principal: Principal, user_id: int, actor: str) -> None:
    """Delete the user, their personal keys and sessions (their jobs and conversations
    stay, visible to admins)."""
    user = load_user(s, principal, user_id)
    _may_manage(principal, user.role)
    view = user_view(user)
    s.delete(user)
    s.flush()
    record(s, principal.tenant_id, "user.delete", actor=actor, user_id=principal.user_id,
           target=str(user_id), details=view)
