"""PATCH /v1/datasets/{id} policies and masks: admins only, every filter checked by name and
by running it on the current version, bad input a 422 naming what is wrong that changes
nothing."""
from __future__ import annotations

import pytest

from tests.people.helpers import key_for, make_user, tenant_of
from tests.utils.datasets import upload, wait_imported

pytestmark = pytest.mark.usefixtures("celery_worker")

SALES = "region,amount,customer\nEU,10,a\nUS,20,b\nAPAC,30,c\nEU,40,d\n"
POLICY = {"table": "sales", "filter": "region = {user.region}"}


class _Acting(dict):
    """Setting ``["role"]`` switches ``auth`` in place to a personal key of a user with that
    role (None: back to the tenant's key, an owner), authenticated as any request is."""

    def __init__(self, settings, auth: dict):
        super().__init__(role=None)
        self._settings, self._auth, self._owner, self._keys = settings, auth, dict(auth), {}

    def __setitem__(self, name, role):
        super().__setitem__(name, role)
        if role is not None and role not in self._keys:
            tenant_id, tenant_name = tenant_of(self._settings, self._owner["Authorization"]
                                               .removeprefix("Bearer "))
            user_id = make_user(self._settings, tenant_id, f"{role}@example.com", role=role)
            self._keys[role] = key_for(self._settings, tenant_name, user_id=user_id)
        self._auth.clear()
        self._auth.update(self._owner if role is None else self._keys[role])


@pytest.fixture
def acting(settings, auth):
    """Who the next requests act as, set through the people work's real authentication."""
    return _Acting(settings, auth)


@pytest.fixture
def dataset_id(client, auth, acting):
    accepted = upload(client, auth, "Sales", ("sales.csv", SALES))
    assert accepted.status_code == 202, accepted.get_data(as_text=True)
    return wait_imported(client, auth, accepted.get_json()["dataset_id"])["dataset_id"]


def _patch(client, auth, dataset_id, body):
    return client.patch(f"/v1/datasets/{dataset_id}", json=body, headers=auth)


def test_an_admin_sets_policies_and_masks_and_they_are_shown(client, auth, dataset_id):
    mask = {"table": "sales", "column": "customer", "mask": "redact"}
    response = _patch(client, auth, dataset_id, {"policies": [POLICY], "masks": [mask]})
    assert response.status_code == 200, response.get_data(as_text=True)
    view = client.get(f"/v1/datasets/{dataset_id}", headers=auth).get_json()
    assert view["policies"] == [{**POLICY, "groups": None, "exempt_admins": True}]
    assert view["masks"] == [{**mask, "groups": None, "exempt_admins": True}]
    cleared = _patch(client, auth, dataset_id, {"policies": []}).get_json()
    assert cleared["policies"] == [] and cleared["masks"] == view["masks"]
    # Each change of what users may see is in the audit log, with the rules as set.
    audit = client.get("/v1/audit?action=dataset.update", headers=auth).get_json()["items"]
    changes = [e["details"] for e in audit if e["target"] == dataset_id]
    assert changes[0]["policies"] == view["policies"] and changes[0]["masks"] == view["masks"]
    assert changes[1] == {"fields": ["policies"], "policies": []}


@pytest.mark.parametrize("policy, words", [
    ({"table": "sales", "filter": "country = {user.region}"}, "no column 'country'"),
    ({"table": "orders", "filter": "region = 'EU'"}, "no table 'orders'"),
    ({"table": "sales", "filter": "region IN (SELECT region FROM sales)"}, "may not hold a query"),
    ({"table": "sales", "filter": "region = 'EU'; DROP TABLE sales"}, "without ';'"),
    ({"table": "sales", "filter": "region = {region}"}, "placeholders"),
    ({"table": "sales", "filter": "no_such_function(region)"}, "does not run"),
])
def test_a_bad_filter_is_a_422_naming_it_and_changes_nothing(client, auth, dataset_id,
                                                             policy, words):
    response = _patch(client, auth, dataset_id, {"policies": [policy]})
    assert response.status_code == 422, response.get_data(as_text=True)
    assert response.content_type == "application/problem+json"
    assert words in response.get_json()["detail"]
    assert client.get(f"/v1/datasets/{dataset_id}", headers=auth).get_json()["policies"] == []


def test_a_bad_mask_is_a_422(client, auth, dataset_id):
    unknown = {"table": "sales", "column": "ssn", "mask": "null"}
    response = _patch(client, auth, dataset_id, {"masks": [unknown]})
    assert response.status_code == 422 and "no column 'ssn'" in response.get_json()["detail"]
    response = _patch(client, auth, dataset_id, {"masks": [{**unknown, "column": "customer",
                                                            "mask": "rot13"}]})
    assert response.status_code == 422


@pytest.mark.parametrize("role", ["viewer", "analyst"])
def test_only_admins_set_policies(client, auth, dataset_id, acting, role):
    acting["role"] = role
    response = _patch(client, auth, dataset_id, {"policies": [POLICY]})
    assert response.status_code == 403, response.get_data(as_text=True)
    acting["role"] = "admin"
    assert _patch(client, auth, dataset_id, {"policies": [POLICY]}).status_code == 200


def test_a_viewer_under_a_policy_gets_no_profile_figures_of_other_rows(client, auth,
                                                                      dataset_id, acting):
    assert _patch(client, auth, dataset_id, {"policies": [POLICY], "examples": [
        {"question": "US revenue?", "sql": "SELECT sum(amount) FROM sales"}]}).status_code == 200
    owner = client.get(f"/v1/datasets/{dataset_id}", headers=auth).get_data(as_text=True)
    assert "APAC" in owner and "US revenue?" in owner  # the owner is exempt
    acting["role"] = "viewer"
    for path in (f"/v1/datasets/{dataset_id}", "/v1/datasets"):
        response = client.get(path, headers=auth)
        assert response.status_code == 200
        text = response.get_data(as_text=True)
        assert "APAC" not in text and "US revenue?" not in text, path
    (table,) = client.get(f"/v1/datasets/{dataset_id}", headers=auth).get_json()["tables"]
    assert table["rows"] is None and all(c["top_values"] == [] for c in table["columns"])
