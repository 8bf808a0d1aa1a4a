"""GET /v1/keys and DELETE /v1/keys/{key_id} (issue 31, item 11): a tenant lists its keys
without their secrets and revokes one, itself included, without SQL; another tenant's
key is 404."""
from __future__ import annotations

import uuid

from shared.db import session_scope
from shared.keys import create_key


def _key(settings, tenant: str) -> str:
    with session_scope(settings.database_url) as s:
        return create_key(s, tenant)


def _bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_keys_are_listed_without_secrets_and_one_is_revoked(client, settings):
    tenant = f"keys-{uuid.uuid4().hex[:8]}"
    first, second = _key(settings, tenant), _key(settings, tenant)
    listed = client.get("/v1/keys", headers=_bearer(first))
    assert listed.status_code == 200, listed.get_data(as_text=True)
    body = listed.get_json()
    assert [k["prefix"] for k in body["items"]] == [first[:16], second[:16]]
    assert body["key_cache_s"] == settings.key_cache_s
    assert first not in listed.get_data(as_text=True)
    assert all(set(k) == {"id", "prefix", "created_at", "revoked_at"} for k in body["items"])
    second_id = body["items"][1]["id"]
    assert client.delete(f"/v1/keys/{second_id}", headers=_bearer(first)).status_code == 204
    after = client.get("/v1/keys", headers=_bearer(first)).get_json()["items"]
    assert after[0]["revoked_at"] is None and after[1]["revoked_at"] is not None


def test_another_tenants_key_is_404_and_stays_usable(client, settings):
    mine, theirs = _key(settings, f"a-{uuid.uuid4().hex[:8]}"), _key(settings,
                                                                      f"b-{uuid.uuid4().hex[:8]}")
    their_id = client.get("/v1/keys", headers=_bearer(theirs)).get_json()["items"][0]["id"]
    refused = client.delete(f"/v1/keys/{their_id}", headers=_bearer(mine))
    assert refused.status_code == 404
    assert refused.mimetype == "application/problem+json"
    assert client.delete("/v1/keys/not-a-key", headers=_bearer(mine)).status_code == 404
    theirs_after = client.get("/v1/keys", headers=_bearer(theirs)).get_json()["items"]
    assert theirs_after[0]["revoked_at"] is None


def test_a_keys_public_id_is_not_its_guessable_row_number(client, settings):
    key = _key(settings, f"c-{uuid.uuid4().hex[:8]}")
    (item,) = client.get("/v1/keys", headers=_bearer(key)).get_json()["items"]
    assert not item["id"].isdigit() and item["id"] == key[:16]
    for guess in range(1, 50):
        client.delete(f"/v1/keys/{guess}", headers=_bearer(key))
    assert client.get("/v1/keys", headers=_bearer(key)).status_code == 200


def test_revoking_twice_keeps_the_first_time_and_the_key_stops_working(settings):
    from api import create_app

    client = create_app(settings=settings.model_copy(update={"key_cache_s": 0})).test_client()
    tenant = f"d-{uuid.uuid4().hex[:8]}"
    admin, doomed = _key(settings, tenant), _key(settings, tenant)
    assert client.get("/v1/datasets", headers=_bearer(doomed)).status_code == 200
    assert client.delete(f"/v1/keys/{doomed[:16]}", headers=_bearer(admin)).status_code == 204
    first = client.get("/v1/keys", headers=_bearer(admin)).get_json()["items"][1]["revoked_at"]
    again = client.delete(f"/v1/keys/{doomed[:16]}", headers=_bearer(admin))
    assert again.status_code == 204
    items = client.get("/v1/keys", headers=_bearer(admin)).get_json()["items"]
    assert first is not None and items[1]["revoked_at"] == first
    refused = client.get("/v1/datasets", headers=_bearer(doomed))
    assert refused.status_code == 401 and refused.mimetype == "application/problem+json"
