"""What an OpenID Connect ID token says about a person, as Sunrise's user fields.

One owner for the claim → role mapping: ``SUNRISE_OIDC_ROLE_CLAIM`` names the claim
(``groups`` by default), ``SUNRISE_OIDC_ROLES`` maps its values to roles, and a person
gets the highest role any of their values maps to, else ``SUNRISE_OIDC_DEFAULT_ROLE``.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shared.principal import ROLES

MAX_GROUPS = 100


def claim_values(claims: Mapping[str, Any], name: str) -> list[str]:
    """The claim's string values: a string is one value, a list keeps its strings."""
    value = claims.get(name)
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [v for v in value if isinstance(v, str)][:MAX_GROUPS]
    return []


def role_for(claims: Mapping[str, Any], role_claim: str, mapping: Mapping[str, str],
             default: str) -> str:
    """The highest role that one of ``role_claim``'s values maps to, else ``default``."""
    granted = [mapping[v] for v in claim_values(claims, role_claim) if v in mapping]
    return max(granted, key=ROLES.index, default=default)


def user_fields(claims: Mapping[str, Any], settings) -> dict[str, Any]:
    """``upsert_user`` keywords for the person the verified ``claims`` describe: the
    subject is the external id, email and groups come from their claims."""
    return {
        "external_id": str(claims["sub"]),
        "email": claims.get("email") if isinstance(claims.get("email"), str) else None,
        "groups": claim_values(claims, "groups"),
        "role": role_for(claims, settings.oidc_role_claim, settings.oidc_roles,
                         settings.oidc_default_role),
    }
