"""``PATCH /v1/tenant {"unknown_users": "create"|"refuse"}`` (issue 35's known limit 1):
what a Sunrise-User naming an external id nobody has does, set through the API by admins
and owners, audited, shown by GET /v1/tenant, validated with a 422 naming the values."""
from __future__ import annotations

import pytest
from sqlalchemy import select

from shared.db import session_scope
from shared.models import AuditEntry, Tenant, User
from tests.people.helpers import acting, key_for, make_user, tenant_of


def _problem(response, status: int) -> dict:
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.mimetype == "application/problem+json"
    return response.get_json()


def _users(settings, tenant_id: int) -> list[str]:
    with session_scope(settings.database_url) as s:
        return sorted(s.scalars(select(User.external_id).where(User.tenant_id == tenant_id)))


def test_refuse_stops_creating_unknown_users_and_create_brings_it_back(client, auth,
                                                                       settings):
    tenant_id, _ = tenant_of(settings, auth["Authorization"].split()[1])
    make_user(settings, tenant_id, "known")
    assert client.get("/v1/tenant", headers=auth).get_json()["unknown_users"] == "create"

    changed = client.patch("/v1/tenant", headers=auth, json={"unknown_users": "refuse"})
    assert changed.status_code == 200, changed.get_data(as_text=True)
    assert changed.get_json()["unknown_users"] == "refuse"
    assert changed.get_json()["budget"] is None  # left as it was
    assert client.get("/v1/tenant", headers=auth).get_json()["unknown_users"] == "refuse"

    refused = _problem(client.get("/v1/me", headers=acting(auth, "stranger")), 403)
    assert "stranger" in refused["detail"]
    assert client.get("/v1/me", headers=acting(auth, "known")).status_code == 200
    assert _users(settings, tenant_id) == ["known"]

    assert client.patch("/v1/tenant", headers=auth,
                        json={"unknown_users": "create"}).status_code == 200
    me = client.get("/v1/me", headers=acting(auth, "stranger")).get_json()
    assert me["user"]["external_id"] == "stranger" and me["role"] == "viewer"

    with session_scope(settings.database_url) as s:
        entries = s.scalars(select(AuditEntry).where(
            AuditEntry.tenant_id == tenant_id, AuditEntry.action == "tenant.update")
            .order_by(AuditEntry.id)).all()
    prefix = auth["Authorization"].split()[1][:16]
    assert [(e.actor, e.target, e.details) for e in entries] == [
        (f"key:{prefix}", str(tenant_id), {"before": {"unknown_users": "create"},
                                           "after": {"unknown_users": "refuse"}}),
        (f"key:{prefix}", str(tenant_id), {"before": {"unknown_users": "refuse"},
                                           "after": {"unknown_users": "create"}}),
    ]
    listed = client.get("/v1/audit?action=tenant.update", headers=auth).get_json()["items"]
    assert len(listed) == 2


def test_admins_may_set_it_but_not_the_budget_and_others_may_not(client, auth, settings):
    tenant_id, name = tenant_of(settings, auth["Authorization"].split()[1])
    for external_id, role in (("ada", "admin"), ("ann", "analyst")):
        make_user(settings, tenant_id, external_id, role=role)

    admin = acting(auth, "ada")
    allowed = client.patch("/v1/tenant", headers=admin, json={"unknown_users": "refuse"})
    assert allowed.status_code == 200, allowed.get_data(as_text=True)
    budget = _problem(client.patch("/v1/tenant", headers=admin, json={
        "unknown_users": "create", "budget": {"monthly_usd": 5}}), 403)
    assert "owners" in budget["detail"]

    analyst = _problem(client.patch("/v1/tenant", headers=acting(auth, "ann"),
                                    json={"unknown_users": "create"}), 403)
    assert "admins and owners" in analyst["detail"]
    no_admin_scope = key_for(settings, name, scopes=["ask", "datasets"])
    scoped = _problem(client.patch("/v1/tenant", headers=no_admin_scope,
                                   json={"unknown_users": "create"}), 403)
    assert "'admin' scope" in scoped["detail"]

    with session_scope(settings.database_url) as s:
        assert s.get(Tenant, tenant_id).unknown_users == "refuse"
        actors = s.scalars(select(AuditEntry.actor).where(
            AuditEntry.tenant_id == tenant_id, AuditEntry.action == "tenant.update")).all()
    assert actors == ["user:ada"]


@pytest.mark.parametrize("value", ["create_viewer", "REFUSE", "", None, 1, ["refuse"]])
def test_other_values_are_a_422_naming_the_allowed_ones_and_change_nothing(
        client, auth, settings, value):
    tenant_id, _ = tenant_of(settings, auth["Authorization"].split()[1])
    problem = _problem(client.patch("/v1/tenant", headers=auth,
                                    json={"unknown_users": value}), 422)
    assert "unknown_users" in problem["detail"]
    assert "'create'" in problem["detail"] and "'refuse'" in problem["detail"]
    with session_scope(settings.database_url) as s:
        assert s.get(Tenant, tenant_id).unknown_users == "create"


def test_the_spec_describes_the_setting(client):
    spec = client.get("/openapi.json").get_json()
    schemas = spec["components"]["schemas"]
    for name in ("TenantPatch", "TenantOut"):
        prop = schemas[name]["properties"]["unknown_users"]
        assert prop["enum"] == ["create", "refuse"], (name, prop)
        assert "viewer" in prop["description"]
    assert "unknown_users" in schemas["TenantOut"]["required"]
    assert "required" not in schemas["TenantPatch"]
    patch = spec["paths"]["/v1/tenant"]["patch"]
    assert {"200", "403", "422"} <= set(patch["responses"])
