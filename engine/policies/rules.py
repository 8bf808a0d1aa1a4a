"""A dataset's row policies and column masks as stored, and which of them bind a principal.

A policy is ``{"table", "filter", "groups"?, "exempt_admins"?}``; a mask is ``{"table",
"column", "mask": "null|hash|redact", "groups"?, "exempt_admins"?}``. A rule binds a
principal when it names none of ``groups`` or one of the principal's groups, unless the
principal is an admin or owner and the rule leaves ``exempt_admins`` true (the default).
Several policies binding one table must all hold (they are ANDed): adding a policy never
shows a row that was hidden.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

MASKS = ("null", "hash", "redact")


@dataclass(frozen=True)
class Policy:
    table: str
    filter: str
    groups: tuple[str, ...] | None = None
    exempt_admins: bool = True

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Policy:
        groups = data.get("groups")
        return cls(str(data["table"]), str(data["filter"]),
                   tuple(groups) if groups is not None else None,
                   bool(data.get("exempt_admins", True)))


@dataclass(frozen=True)
class Mask:
    table: str
    column: str
    mask: str
    groups: tuple[str, ...] | None = None
    exempt_admins: bool = True

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Mask:
        groups = data.get("groups")
        return cls(str(data["table"]), str(data["column"]), str(data["mask"]),
                   tuple(groups) if groups is not None else None,
                   bool(data.get("exempt_admins", True)))


def binds(rule: Policy | Mask, principal: Any) -> bool:
    """Whether ``rule`` applies to ``principal`` (a ``shared.principal.Principal``)."""
    if principal.is_admin and rule.exempt_admins:
        return False
    if rule.groups is None:
        return True
    return bool(set(rule.groups) & set(principal.groups))


def binding(policies: Iterable[Mapping[str, Any]] | None,
            masks: Iterable[Mapping[str, Any]] | None,
            principal: Any) -> tuple[list[Policy], list[Mask]]:
    """The stored rules (JSON lists, None for none) that bind ``principal``."""
    return ([p for p in map(Policy.from_dict, policies or ()) if binds(p, principal)],
            [m for m in map(Mask.from_dict, masks or ()) if binds(m, principal)])
