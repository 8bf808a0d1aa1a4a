"""SUNRISE_OIDC_ROLES as an operator writes it, and the mapping it makes."""
from __future__ import annotations

import pytest
from pydantic import ValidationError

from shared.config import Settings
from shared.oidc_claims import role_for


def test_the_role_mapping_is_read_from_its_documented_form(monkeypatch):
    monkeypatch.setenv("SUNRISE_OIDC_ROLES", "admins=admin, analysts = analyst")
    settings = Settings()
    assert settings.oidc_roles == {"admins": "admin", "analysts": "analyst"}
    assert not settings.oidc_enabled  # no issuer, client id and secret


@pytest.mark.parametrize("value", ["admins=boss", "=admin", "admins"])
def test_a_mapping_to_no_role_is_refused_naming_it(value):
    with pytest.raises(ValidationError, match="SUNRISE_OIDC_ROLES"):
        Settings(oidc_roles=value)


def test_the_highest_mapped_role_wins_and_unmapped_values_give_the_default():
    mapping = {"admins": "admin", "analysts": "analyst"}
    assert role_for({"groups": ["analysts", "admins"]}, "groups", mapping, "viewer") == "admin"
    assert role_for({"groups": "analysts"}, "groups", mapping, "viewer") == "analyst"
    assert role_for({"groups": ["staff", 7, None]}, "groups", mapping, "viewer") == "viewer"
    assert role_for({}, "groups", mapping, "viewer") == "viewer"
