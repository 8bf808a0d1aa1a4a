"""Who may use a dataset: its ``access`` (``{"groups": [...], "users": [...]}``) against a
principal. One owner for the rule, read by asking (``pin_dataset``) and by listings."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shared.errors import ValidationFailed
from shared.principal import Principal

MAX_ENTRIES = 500


def may_use(principal: Principal, access: Mapping[str, Any] | None) -> bool:
    """True when ``access`` is null (the whole tenant), the principal is an admin or
    owner (a service key acting for no one is an owner), its external id is listed in
    ``users`` or one of its groups in ``groups``."""
    if access is None or principal.is_admin:
        return True
    if principal.external_id is not None and principal.external_id in access.get("users", ()):
        return True
    return bool(set(principal.groups) & set(access.get("groups", ())))


def check_access(access: Any) -> dict[str, list[str]] | None:
    """``access`` as stored: null, or ``{"groups", "users"}`` lists of strings (sorted,
    without repeats). Raises ValidationFailed naming what is wrong."""
    if access is None:
        return None
    if not isinstance(access, dict) or set(access) - {"groups", "users"}:
        raise ValidationFailed('access must be null or {"groups": [...], "users": [...]} '
                               "(users by external_id).")
    checked = {}
    for name in ("groups", "users"):
        values = access.get(name, [])
        if not isinstance(values, list) or len(values) > MAX_ENTRIES or not all(
                isinstance(v, str) and 0 < len(v) <= 200 for v in values):
            raise ValidationFailed(f"access.{name} must be a list of at most {MAX_ENTRIES} "
                                   "non-empty strings.")
        checked[name] = sorted(set(values))
    return checked
