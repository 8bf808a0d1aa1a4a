"""/v1/users (admins; only owners manage owners) and the audit log: every change to
users, keys and datasets is recorded, GET /v1/audit pages and filters it, and on
MariaDB the log refuses UPDATE and DELETE (issue 35)."""
from __future__ import annotations

import pymysql
import pytest
import sqlalchemy as sa

from shared.audit import record
from shared.db import session_scope
from tests.people.helpers import acting, key_for, make_user, tenant_of


def test_admins_manage_users_below_owner_and_every_change_is_audited(client, auth, settings):
    tenant_id, tenant_name = tenant_of(settings, auth["Authorization"].split()[1])
    make_user(settings, tenant_id, "ada", role="admin")
    admin = acting(auth, "ada")

    made = client.post("/v1/users", headers=admin, json={
        "external_id": "u-1", "email": "One@Example.com", "role": "analyst",
        "groups": ["sales"], "attributes": {"region": "EU", "levels": [1, 2]}})
    assert made.status_code == 201, made.get_data(as_text=True)
    user = made.get_json()
    assert user["email"] == "one@example.com" and user["groups"] == ["sales"]
    assert client.post("/v1/users", headers=admin, json={
        "external_id": "u-1"}).status_code == 409
    assert client.post("/v1/users", headers=admin, json={
        "external_id": "u-2", "email": "one@example.com"}).status_code == 409

    # Owners only for owners.
    assert client.post("/v1/users", headers=admin, json={
        "external_id": "o-1", "role": "owner"}).status_code == 403
    assert client.patch(f"/v1/users/{user['user_id']}", headers=admin,
                        json={"role": "owner"}).status_code == 403
    assert client.post("/v1/users", headers=auth, json={
        "external_id": "o-1", "role": "owner"}).status_code == 201

    bad = client.post("/v1/users", headers=admin, json={
        "external_id": "u-3", "attributes": {"not an identifier": "x"}})
    assert bad.status_code == 422 and "identifier" in bad.get_json()["detail"]

    changed = client.patch(f"/v1/users/{user['user_id']}", headers=admin,
                           json={"role": "viewer", "attributes": {"region": "US"}})
    assert changed.status_code == 200
    assert changed.get_json()["role"] == "viewer"
    assert changed.get_json()["attributes"] == {"region": "US"}
    listed = client.get("/v1/users?limit=2", headers=admin).get_json()
    assert len(listed["items"]) == 2 and listed["next_cursor"]
    rest = client.get(f"/v1/users?cursor={listed['next_cursor']}", headers=admin).get_json()
    assert [u["external_id"] for u in listed["items"] + rest["items"]] == ["ada", "u-1", "o-1"]
    assert client.delete(f"/v1/users/{user['user_id']}", headers=admin).status_code == 204
    assert client.get(f"/v1/users/{user['user_id']}", headers=admin).status_code == 404

    # A spare key to revoke: revoking the one this test sends would refuse its next
    # request at once.
    key_for(settings, tenant_name)
    keys = client.get("/v1/keys", headers=admin).get_json()["items"]
    assert client.delete(f"/v1/keys/{keys[1]['id']}", headers=admin).status_code == 204

    log = client.get("/v1/audit", headers=admin).get_json()["items"]
    actions = [(e["action"], e["actor"]) for e in log]
    assert ("user.create", "user:ada") in actions and ("user.update", "user:ada") in actions
    assert ("user.delete", "user:ada") in actions and ("key.revoke", "user:ada") in actions
    assert ("user.create", f"key:{keys[0]['id']}") in actions  # the owner made by the key
    update = next(e for e in log if e["action"] == "user.update")
    assert update["details"]["before"]["role"] == "analyst"
    assert update["details"]["after"]["role"] == "viewer"


def test_audit_listing_filters_and_pages(client, auth, settings):
    tenant_id, _ = tenant_of(settings, auth["Authorization"].split()[1])
    zed = make_user(settings, tenant_id, "zed")
    with session_scope(settings.database_url) as s:
        for n in range(5):
            record(s, tenant_id, "sign_in", actor="user:zed", user_id=zed, details={"n": n})
        record(s, tenant_id, "key.create", actor="cli")
    first = client.get("/v1/audit?user=zed&limit=3", headers=auth).get_json()
    assert [e["details"]["n"] for e in first["items"]] == [0, 1, 2]
    second = client.get(f"/v1/audit?user=zed&limit=3&cursor={first['next_cursor']}",
                        headers=auth).get_json()
    assert [e["details"]["n"] for e in second["items"]] == [3, 4]
    assert second["next_cursor"] is None
    keyed = client.get("/v1/audit?action=key.create", headers=auth).get_json()["items"]
    assert [e["actor"] for e in keyed] == ["cli"]
    assert client.get("/v1/audit?from=2999-01-01T00:00:00Z", headers=auth
                      ).get_json()["items"] == []
    assert client.get("/v1/audit?user=nobody", headers=auth).get_json()["items"] == []
    bad = client.get("/v1/audit?from=yesterday", headers=auth)
    assert bad.status_code == 422 and "from" in bad.get_json()["detail"]
    assert client.get("/v1/audit?cursor=1%20OR%201=1", headers=auth).status_code == 422


def test_the_audit_log_refuses_update_and_delete_on_mariadb(settings, tenant_key):
    assert settings.database_url.startswith("mysql")
    tenant_id, _ = tenant_of(settings, tenant_key)
    with session_scope(settings.database_url) as s:
        entry_id = record(s, tenant_id, "sign_in", actor="user:x").id
    engine = sa.create_engine(settings.database_url)
    try:
        for statement in ("UPDATE audit_log SET action = 'forged' WHERE id = :id",
                          "DELETE FROM audit_log WHERE id = :id"):
            with pytest.raises(sa.exc.OperationalError) as refused, engine.begin() as conn:
                conn.execute(sa.text(statement), {"id": entry_id})
            assert isinstance(refused.value.orig, pymysql.err.OperationalError)
            assert "append-only" in str(refused.value.orig)
        with engine.begin() as conn:
            assert conn.scalar(sa.text("SELECT action FROM audit_log WHERE id = :id"),
                               {"id": entry_id}) == "sign_in"
    finally:
        engine.dispose()
