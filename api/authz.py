"""Authorization: what the request's principal may do, checked in one place.

Roles (``shared.principal.ROLES``): a viewer asks on datasets granted to them and sees
their own conversations, jobs and batches; an analyst may also upload datasets and run
batches; an admin sees every user's work and manages datasets, users below owner, keys
and the audit log; an owner may do everything, owners included. Key scopes narrow what
a key may do whatever its user's role: ``ask`` (jobs, batches), ``datasets`` (dataset
changes), ``admin`` (users, keys, audit), ``act_as`` (``Sunrise-User``).
"""
from __future__ import annotations

from flask import g, request
from sqlalchemy import select

from api.acting import current_principal
from api.resources import resources
from shared.errors import Forbidden, NotFound
from shared.models import is_id
from shared.principal import Principal


def require(*, role: str | None = None, scope: str | None = None) -> Principal:
    """The request's principal, if its key has ``scope`` and its role is at least
    ``role``; raises Forbidden (403) naming what is missing otherwise."""
    principal = current_principal()
    if scope is not None and scope not in principal.scopes:
        raise Forbidden(f"This key lacks the {scope!r} scope; it has "
                        f"{', '.join(sorted(principal.scopes)) or 'none'}.")
    if role is not None and not principal.at_least(role):
        raise Forbidden(f"This needs the {role} role or above; you are {principal.role}.")
    return principal


def owner_filter(principal: Principal | None = None) -> int | None:
    """The user id a listing or lookup is restricted to: the principal's own for a viewer
    or analyst (another user's work is then a 404), None (everything in the tenant) for
    admins, owners and service keys acting for no one."""
    principal = principal or current_principal()
    return None if principal.is_admin else principal.user_id


def actor() -> str:
    """Who acts, as the audit log names it: ``user:<external id>`` or ``key:<prefix>``."""
    return g.get("actor") or f"tenant:{g.tenant_id}"


def check_owned(model: type, object_id: str, noun: str) -> None:
    """For a viewer or analyst: raise NotFound (the same words as an unknown id) unless
    ``model`` row ``object_id`` of the tenant is theirs. Admins, owners and service
    keys acting for no one pass without a query."""
    owner = owner_filter()
    if owner is None:
        return
    with resources().session() as s:
        row_owner = s.scalar(select(model.user_id).where(
            model.id == object_id, model.tenant_id == g.tenant_id)) if is_id(object_id) else None
    if row_owner != owner:
        raise NotFound(f"No {noun} {object_id}.")


def owned_view_arg(model: type, arg: str, noun: str):
    """A ``before_request`` hook: ``check_owned`` on the URL's ``arg`` when it has one."""

    def hook() -> None:
        object_id = (request.view_args or {}).get(arg)
        if object_id is not None:
            check_owned(model, object_id, noun)

    return hook


def requiring(*, role: str | None = None, scope: str | None = None):
    """A ``before_request`` hook: ``require(role=..., scope=...)`` for a whole blueprint."""

    def hook() -> None:
        require(role=role, scope=scope)

    return hook
