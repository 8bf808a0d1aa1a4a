"""Disabling a user, revoking a key and changing a role take effect at once in every
API process (issue 35's known limit 2): two app instances share MariaDB and Redis, each
with its own cache of grants and principals kept for an hour; a change made through
one is honoured by the next request to the other."""
from __future__ import annotations

import pytest

from api import create_app
from tests.people.helpers import acting, key_for, make_user, tenant_of


@pytest.fixture
def two_apps(settings):
    """Two API processes' worth of apps, caching for far longer than any test runs."""
    slow = settings.model_copy(update={"key_cache_s": 3600})
    return create_app(settings=slow).test_client(), create_app(settings=slow).test_client()


def test_a_user_disabled_through_one_process_is_refused_by_the_next_request_to_another(
        two_apps, auth, settings):
    here, there = two_apps
    tenant_id, name = tenant_of(settings, auth["Authorization"].split()[1])
    pat = make_user(settings, tenant_id, "pat", role="analyst")
    personal = key_for(settings, name, user_id=pat)
    for headers in (acting(auth, "pat"), personal):  # remembered by the other process
        assert there.get("/v1/me", headers=headers).status_code == 200

    changed = here.patch(f"/v1/users/{pat}", headers=auth, json={"disabled": True})
    assert changed.status_code == 200, changed.get_data(as_text=True)

    for headers in (acting(auth, "pat"), personal):
        refused = there.get("/v1/me", headers=headers)
        assert refused.status_code == 403, refused.get_data(as_text=True)
        assert refused.mimetype == "application/problem+json"
        assert "disabled" in refused.get_json()["detail"]
    # The tenant's other grants keep working: only what changed is refused.
    assert there.get("/v1/me", headers=auth).status_code == 200


def test_a_changed_role_applies_on_the_next_request_to_another_process(two_apps, auth,
                                                                        settings):
    here, there = two_apps
    tenant_id, _ = tenant_of(settings, auth["Authorization"].split()[1])
    vic = make_user(settings, tenant_id, "vic", role="admin")
    assert there.get("/v1/users", headers=acting(auth, "vic")).status_code == 200

    assert here.patch(f"/v1/users/{vic}", headers=auth,
                      json={"role": "viewer", "groups": ["sales"]}).status_code == 200

    me = there.get("/v1/me", headers=acting(auth, "vic")).get_json()
    assert me["role"] == "viewer" and me["user"]["groups"] == ["sales"]
    assert there.get("/v1/users", headers=acting(auth, "vic")).status_code == 403


def test_a_key_revoked_through_one_process_is_refused_by_the_next_request_to_another(
        two_apps, auth, settings):
    here, there = two_apps
    _, name = tenant_of(settings, auth["Authorization"].split()[1])
    doomed = key_for(settings, name)
    assert there.get("/v1/datasets", headers=doomed).status_code == 200

    prefix = doomed["Authorization"].split()[1][:16]
    assert here.delete(f"/v1/keys/{prefix}", headers=auth).status_code == 204

    refused = there.get("/v1/datasets", headers=doomed)
    assert refused.status_code == 401 and refused.mimetype == "application/problem+json"
    assert there.get("/v1/datasets", headers=auth).status_code == 200


def test_a_deleted_users_personal_key_stops_at_once_in_another_process(two_apps, auth,
                                                                       settings):
    here, there = two_apps
    tenant_id, name = tenant_of(settings, auth["Authorization"].split()[1])
    gone = make_user(settings, tenant_id, "gone", role="analyst")
    personal = key_for(settings, name, user_id=gone)
    assert there.get("/v1/me", headers=personal).status_code == 200

    assert here.delete(f"/v1/users/{gone}", headers=auth).status_code == 204

    assert there.get("/v1/me", headers=personal).status_code in (401, 403)


def test_without_redis_requests_are_served_and_the_cache_window_bounds_a_change(
        auth, settings):
    # A process whose Redis refuses connections: the rate limiter lets requests through
    # and no generation can be read, so what it remembered serves for key_cache_s.
    cut_off = create_app(settings=settings.model_copy(update={
        "key_cache_s": 3600, "redis_url": "redis://127.0.0.1:9/0"})).test_client()
    here = create_app(settings=settings).test_client()
    tenant_id, _ = tenant_of(settings, auth["Authorization"].split()[1])
    sam = make_user(settings, tenant_id, "sam", role="analyst")
    assert cut_off.get("/v1/me", headers=acting(auth, "sam")).status_code == 200

    assert here.patch(f"/v1/users/{sam}", headers=auth, json={"disabled": True}
                      ).status_code == 200

    assert cut_off.get("/v1/me", headers=acting(auth, "sam")).status_code == 200
    assert here.get("/v1/me", headers=acting(auth, "sam")).status_code == 403


def test_a_revoked_key_stays_refused_when_redis_loses_the_tenants_generation(
        two_apps, auth, settings):
    # Redis flushed, restarted without persistence or evicting the token: the generation
    # is gone. What another process remembered before the revocation must not be
    # confirmed by "no generation" (the state it was loaded under) again.
    from shared.access_generation import generation_key
    from shared.redis_client import redis_for

    here, there = two_apps
    tenant_id, name = tenant_of(settings, auth["Authorization"].split()[1])
    redis = redis_for(settings.redis_url)
    redis.delete(generation_key(tenant_id))  # a tenant whose access never changed
    doomed = key_for(settings, name)
    assert there.get("/v1/datasets", headers=doomed).status_code == 200

    prefix = doomed["Authorization"].split()[1][:16]
    assert here.delete(f"/v1/keys/{prefix}", headers=auth).status_code == 204
    redis.delete(generation_key(tenant_id))  # the flush

    refused = there.get("/v1/datasets", headers=doomed)
    assert refused.status_code == 401, refused.get_data(as_text=True)
    assert there.get("/v1/datasets", headers=auth).status_code == 200
