"""The dataset access rule and the user's shape, as plain functions (issue 35)."""
from __future__ import annotations

import pytest

from shared.errors import ValidationFailed
from shared.people import check_attributes, check_email, check_groups, check_role
from shared.people_access import check_access, may_use
from shared.principal import Principal

ACCESS = {"groups": ["sales"], "users": ["ann"]}


def _user(role="viewer", external_id="zed", groups=()):
    return Principal(tenant_id=1, user_id=7, external_id=external_id, role=role,
                     groups=tuple(groups))


def test_who_may_use_a_dataset():
    assert may_use(_user(), None)  # null: the whole tenant
    assert may_use(_user(external_id="ann"), ACCESS)
    assert may_use(_user(groups=["ops", "sales"]), ACCESS)
    assert not may_use(_user(groups=["ops"]), ACCESS)
    assert not may_use(_user(role="analyst"), ACCESS)
    assert may_use(_user(role="admin"), ACCESS) and may_use(Principal(tenant_id=1), ACCESS)
    assert not may_use(_user(), {"groups": [], "users": []})


def test_access_and_user_values_are_checked():
    assert check_access(None) is None
    assert check_access({"users": ["b", "a", "a"]}) == {"groups": [], "users": ["a", "b"]}
    for bad in ({"roles": []}, {"users": "ann"}, {"groups": [""]}, {"users": [1]}, []):
        with pytest.raises(ValidationFailed):
            check_access(bad)
    with pytest.raises(ValidationFailed):
        check_role("root")
    assert check_groups(["b", "a", "b"]) == ["a", "b"]
    with pytest.raises(ValidationFailed):
        check_groups(["x" * 201])
    assert check_email("Ann@Example.COM") == "ann@example.com"
    for bad in ("no-at", "a@b@c", "a b@c", "x\n@y"):
        with pytest.raises(ValidationFailed):
            check_email(bad)
    assert check_attributes({"region": "EU", "ids": [1, "2"]}) == {"region": "EU",
                                                                   "ids": [1, "2"]}
    for bad in ({"region; drop": "x"}, {"flag": True}, {"nested": {"a": 1}}, {"r": [[1]]}):
        with pytest.raises(ValidationFailed):
            check_attributes(bad)
