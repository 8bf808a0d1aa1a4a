"""Acting as a tenant's users through one service key (issue 35): each user sees only
their own conversations, jobs and batches; Sunrise-User needs the act_as scope; a
viewer calling an admin endpoint is a 403; personal keys act as their user."""
from __future__ import annotations

from sqlalchemy import select

from shared.db import session_scope
from shared.models import Tenant, User
from tests.people.helpers import acting, key_for, make_user, tenant_of


def _ask(client, headers, message="How many flights?", **extra):
    response = client.post("/v1/jobs", headers=headers, json={"message": message, **extra})
    assert response.status_code == 202, response.get_data(as_text=True)
    return response.get_json()


def test_two_users_through_one_service_key_see_only_their_own_conversations(
        client, auth, settings):
    alice, bob = acting(auth, "alice"), acting(auth, "bob")
    a = _ask(client, alice, "Alice's question")
    b = _ask(client, bob, "Bob's question")

    alice_list = client.get("/v1/conversations", headers=alice).get_json()["items"]
    bob_list = client.get("/v1/conversations", headers=bob).get_json()["items"]
    assert [c["conversation_id"] for c in alice_list] == [a["conversation_id"]]
    assert [c["conversation_id"] for c in bob_list] == [b["conversation_id"]]
    # The service key acting for no one is the tenant's owner: it sees both.
    every = {c["conversation_id"] for c in client.get("/v1/conversations",
                                                      headers=auth).get_json()["items"]}
    assert every == {a["conversation_id"], b["conversation_id"]}

    # Another user's conversation and job are a 404, as another tenant's are.
    for path in (f"/v1/conversations/{b['conversation_id']}", f"/v1/jobs/{b['job_id']}",
                 f"/v1/jobs/{b['job_id']}/events"):
        refused = client.get(path, headers=alice)
        assert refused.status_code == 404, path
        assert "application/problem+json" in refused.content_type
    assert client.post(f"/v1/jobs/{b['job_id']}/cancel", headers=alice).status_code == 404
    assert client.delete(f"/v1/conversations/{b['conversation_id']}",
                         headers=alice).status_code == 404
    # Nor may Alice continue Bob's conversation.
    hijack = client.post("/v1/jobs", headers=alice, json={
        "message": "more", "conversation_id": b["conversation_id"]})
    assert hijack.status_code == 404
    assert client.get(f"/v1/jobs/{a['job_id']}", headers=alice).status_code == 200
    assert client.get(f"/v1/jobs/{b['job_id']}", headers=auth).status_code == 200

    tenant_id, _ = tenant_of(settings, auth["Authorization"].split()[1])
    with session_scope(settings.database_url) as s:
        made = s.scalars(select(User).where(User.tenant_id == tenant_id)).all()
        # Created just in time as viewers.
        assert sorted((u.external_id, u.role) for u in made) == [
            ("alice", "viewer"), ("bob", "viewer")]


def test_an_admin_acting_user_sees_every_users_work(client, auth, settings):
    tenant_id, _ = tenant_of(settings, auth["Authorization"].split()[1])
    make_user(settings, tenant_id, "boss", role="admin")
    b = _ask(client, acting(auth, "bob"))
    boss = acting(auth, "boss")
    assert client.get(f"/v1/jobs/{b['job_id']}", headers=boss).status_code == 200
    assert b["conversation_id"] in {c["conversation_id"] for c in client.get(
        "/v1/conversations", headers=boss).get_json()["items"]}


def test_sunrise_user_with_a_key_without_act_as_is_403_and_creates_no_one(
        client, settings, tenant_key):
    tenant_id, name = tenant_of(settings, tenant_key)
    narrow = key_for(settings, name, scopes=["ask", "datasets"])
    refused = client.get("/v1/conversations", headers=acting(narrow, "mallory"))
    assert refused.status_code == 403
    assert "act_as" in refused.get_json()["detail"]
    # The same key without the header works, for the tenant.
    assert client.get("/v1/conversations", headers=narrow).status_code == 200
    with session_scope(settings.database_url) as s:
        assert s.scalar(select(User).where(User.tenant_id == tenant_id)) is None


def test_a_viewer_calling_admin_endpoints_is_403(client, auth, settings):
    viewer = acting(auth, "vera")
    for method, path in (("get", "/v1/users"), ("post", "/v1/users"), ("get", "/v1/keys"),
                         ("get", "/v1/audit"), ("get", "/v1/usage"),
                         ("delete", "/v1/keys/sk-sunrise-abcde"),
                         ("patch", "/v1/users/1"), ("post", "/v1/batches")):
        response = getattr(client, method)(path, headers=viewer, json={})
        assert response.status_code == 403, (method, path, response.get_data(as_text=True))
        assert "admin" in response.get_json()["detail"] or "analyst" in \
            response.get_json()["detail"]
    me = client.get("/v1/me", headers=viewer).get_json()
    assert me["role"] == "viewer" and me["user"]["external_id"] == "vera"
    assert "act_as" not in me["scopes"]


def test_key_scopes_narrow_what_a_full_role_may_do(client, settings, tenant_key):
    _, name = tenant_of(settings, tenant_key)
    ask_only = key_for(settings, name, scopes=["ask"])
    assert client.get("/v1/users", headers=ask_only).status_code == 403
    assert client.get("/v1/keys", headers=ask_only).status_code == 403
    assert client.post("/v1/datasets", headers=ask_only, json={}).status_code == 403
    assert client.get("/v1/conversations", headers=ask_only).status_code == 200
    datasets_only = key_for(settings, name, scopes=["datasets"])
    refused = client.post("/v1/jobs", headers=datasets_only, json={"message": "hi"})
    assert refused.status_code == 403 and "'ask'" in refused.get_json()["detail"]


def test_a_personal_key_acts_as_its_user_and_may_not_act_as_another(
        client, auth, settings, tenant_key):
    tenant_id, name = tenant_of(settings, tenant_key)
    pat = make_user(settings, tenant_id, "pat", role="analyst")
    personal = key_for(settings, name, user_id=pat)
    me = client.get("/v1/me", headers=personal).get_json()
    assert me["user"]["external_id"] == "pat" and me["role"] == "analyst"
    job = _ask(client, personal)
    assert client.get(f"/v1/jobs/{job['job_id']}", headers=acting(auth, "other")
                      ).status_code == 404
    assert client.get(f"/v1/jobs/{job['job_id']}", headers=personal).status_code == 200
    refused = client.get("/v1/me", headers=acting(personal, "boss"))
    assert refused.status_code == 403


def test_unknown_users_are_refused_when_the_tenant_says_so(client, auth, settings):
    tenant_id, _ = tenant_of(settings, auth["Authorization"].split()[1])
    with session_scope(settings.database_url) as s:
        s.get(Tenant, tenant_id).unknown_users = "refuse"
    refused = client.get("/v1/conversations", headers=acting(auth, "stranger"))
    assert refused.status_code == 403 and "stranger" in refused.get_json()["detail"]
    make_user(settings, tenant_id, "known")
    assert client.get("/v1/conversations", headers=acting(auth, "known")).status_code == 200


def test_a_hostile_sunrise_user_header_is_refused_clearly(client, auth):
    for value in ("x" * 201, "a\tb", ""):
        response = client.get("/v1/conversations", headers=acting(auth, value))
        assert response.status_code == 403, repr(value)
        assert "Sunrise-User" in response.get_json()["detail"]


def test_a_disabled_user_is_refused(client, auth, settings):
    tenant_id, _ = tenant_of(settings, auth["Authorization"].split()[1])
    gone = make_user(settings, tenant_id, "gone")
    with session_scope(settings.database_url) as s:
        s.get(User, gone).disabled = True
    assert client.get("/v1/me", headers=acting(auth, "gone")).status_code == 403
