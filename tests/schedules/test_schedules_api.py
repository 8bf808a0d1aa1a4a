"""The /v1/schedules contract against the real app database: save (the secret shown
once), list, read, pause and resume (next_run_at follows), delete; every bad input a
422 naming its field that saves nothing; another tenant's schedule is not there."""
from __future__ import annotations

import uuid

import pytest

from shared.db import session_scope
from shared.keys import create_key

WEEKLY = {"name": "Weekly flights", "questions": ["How many flights were there?"],
          "cron": "0 7 * * 1", "timezone": "Europe/Berlin", "format": "html",
          "deliver": [{"type": "email", "to": ["team@example.com"]},
                      {"type": "webhook", "url": "http://127.0.0.1:9/hook"}]}


def test_save_read_pause_resume_delete(client, auth):
    resp = client.post("/v1/schedules", headers=auth, json=WEEKLY)
    assert resp.status_code == 201, resp.get_json()
    created = resp.get_json()
    sid = created["schedule_id"]
    assert len(created["secret"]) == 64 and created["next_run_at"].endswith(":00:00Z")
    assert resp.headers["Location"] == f"/v1/schedules/{sid}"

    view = client.get(f"/v1/schedules/{sid}", headers=auth).get_json()
    assert view["cron"] == "0 7 * * 1" and view["timezone"] == "Europe/Berlin"
    assert "secret" not in view and view["last_runs"] == []
    assert [s["schedule_id"] for s in
            client.get("/v1/schedules", headers=auth).get_json()["schedules"]] == [sid]

    paused = client.patch(f"/v1/schedules/{sid}", headers=auth, json={"paused": True})
    assert paused.status_code == 200 and paused.get_json()["next_run_at"] is None
    resumed = client.patch(f"/v1/schedules/{sid}", headers=auth, json={"paused": False})
    assert resumed.get_json()["next_run_at"] == created["next_run_at"]

    assert client.delete(f"/v1/schedules/{sid}", headers=auth).status_code == 204
    assert client.get(f"/v1/schedules/{sid}", headers=auth).status_code == 404


def test_another_tenants_schedule_is_not_found(client, auth, settings):
    sid = client.post("/v1/schedules", headers=auth, json=WEEKLY).get_json()["schedule_id"]
    with session_scope(settings.database_url) as s:
        other = {"Authorization": f"Bearer {create_key(s, f'other-{uuid.uuid4().hex[:8]}')}"}
    assert client.get(f"/v1/schedules/{sid}", headers=other).status_code == 404
    assert client.patch(f"/v1/schedules/{sid}", headers=other,
                        json={"paused": True}).status_code == 404
    assert client.post(f"/v1/schedules/{sid}/run", headers=other).status_code == 404
    assert client.get("/v1/schedules", headers=other).get_json()["schedules"] == []


@pytest.mark.parametrize(("change", "field"), [
    ({"cron": "every monday"}, "cron"),
    ({"timezone": "Mars/Olympus"}, "timezone"),
    ({"condition": {"sql": "DELETE FROM flights", "op": ">", "value": 1}}, "condition.sql"),
    ({"condition": {"sql": "SELECT 1; SELECT 2", "op": ">", "value": 1}}, "condition.sql"),
    ({"condition": {"sql": "SELECT 1", "op": "~", "value": 1}}, "condition.op"),
    ({"deliver": [{"type": "email", "to": ["not an address"]}]}, "deliver.0.email.to"),
    ({"deliver": [{"type": "webhook", "url": "http://169.254.169.254/latest"}]},
     "deliver[0].url"),
    ({"deliver": [{"type": "slack", "webhook_url": "http://10.1.2.3/x"}]},
     "deliver[0].webhook_url"),
    ({"deliver": [{"type": "pigeon"}]}, "deliver.0"),
])
def test_bad_input_is_a_422_naming_the_field_and_saves_nothing(client, auth, change, field):
    resp = client.post("/v1/schedules", headers=auth, json={**WEEKLY, **change})
    assert resp.status_code == 422, resp.get_json()
    assert resp.get_json()["detail"].startswith(field), resp.get_json()["detail"]
    assert client.get("/v1/schedules", headers=auth).get_json()["schedules"] == []


def test_a_bad_patch_changes_nothing(client, auth):
    sid = client.post("/v1/schedules", headers=auth, json=WEEKLY).get_json()["schedule_id"]
    resp = client.patch(f"/v1/schedules/{sid}", headers=auth, json={"cron": "61 * * * *"})
    assert resp.status_code == 422 and resp.get_json()["detail"].startswith("cron")
    assert client.get(f"/v1/schedules/{sid}", headers=auth).get_json()["cron"] == "0 7 * * 1"
