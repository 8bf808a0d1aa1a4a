"""Schedules under people's roles and scopes (docs/people.md): a viewer may not save a
schedule, an analyst's schedule is theirs (another viewer's or analyst's is a 404), an
admin sees every one; the schedule's user comes from the principal and its runs' batch
and jobs belong to that user; changes are audited; each run is a ``schedule_run`` span."""
from __future__ import annotations

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from sqlalchemy import select

from shared import tracing
from shared.audit import entries
from shared.db import session_factory, session_scope
from shared.events import EventLog
from shared.models import Batch, Job, Schedule, ScheduleRun, new_id, utcnow
from shared.redis_client import redis_for
from tests.people.helpers import acting, key_for, team
from tests.utils.datasets import upload, wait_imported

SALES = "region,revenue\nnorth,10\nsouth,20\n"
DAILY = {"name": "Daily flights", "questions": ["How many flights were there?"],
         "cron": "0 7 * * *", "timezone": "UTC",
         "deliver": [{"type": "email", "to": ["team@example.com"]}]}


def run_once(settings, tenant_id: int, schedule_id: str) -> tuple[str, str | None]:
    """A manual slot of the schedule, run in this process (no broker): (run id, status)."""
    from worker.schedules.runner import ScheduleRunner

    run_id = new_id()
    with session_factory(settings.database_url).begin() as s:
        s.add(ScheduleRun(id=run_id, schedule_id=schedule_id, tenant_id=tenant_id,
                          slot=utcnow(), manual=True, status="running", created_at=utcnow()))
    runner = ScheduleRunner(settings, None, EventLog(redis_for(settings.redis_url)))
    return run_id, runner.run(run_id)


@pytest.fixture
def people(settings, auth):
    return team(settings, auth)


def test_roles_and_ownership(client, auth, settings, people):
    tenant_id, _, ids = people
    refused = client.post("/v1/schedules", headers=acting(auth, "vic"), json=DAILY)
    assert refused.status_code == 403 and "analyst" in refused.get_json()["detail"]

    resp = client.post("/v1/schedules", headers=acting(auth, "ann"), json=DAILY)
    assert resp.status_code == 201, resp.get_json()
    sid = resp.get_json()["schedule_id"]
    with session_scope(settings.database_url) as s:
        assert s.get(Schedule, sid).user_id == ids["ann"]

    for other in ("bob", "vic"):
        headers = acting(auth, other)
        assert client.get(f"/v1/schedules/{sid}", headers=headers).status_code == 404
        assert client.get(f"/v1/schedules/{sid}/runs", headers=headers).status_code == 404
        assert client.post(f"/v1/schedules/{sid}/run", headers=headers).status_code == 404
        assert client.delete(f"/v1/schedules/{sid}", headers=headers).status_code == 404
        assert client.get("/v1/schedules", headers=headers).get_json()["schedules"] == []
    assert client.patch(f"/v1/schedules/{sid}", headers=acting(auth, "bob"),
                        json={"paused": True}).status_code == 404

    admin = acting(auth, "ada")
    assert client.get(f"/v1/schedules/{sid}", headers=admin).status_code == 200
    assert [x["schedule_id"] for x in
            client.get("/v1/schedules", headers=admin).get_json()["schedules"]] == [sid]
    assert client.patch(f"/v1/schedules/{sid}", headers=acting(auth, "ann"),
                        json={"paused": True}).status_code == 200
    assert client.delete(f"/v1/schedules/{sid}", headers=admin).status_code == 204

    with session_scope(settings.database_url) as s:
        log = [(e.action, e.user_id, e.actor, e.target) for e in entries(s, tenant_id)
               if e.action.startswith("schedule.")]
    assert log == [("schedule.create", ids["ann"], "user:ann", sid),
                   ("schedule.update", ids["ann"], "user:ann", sid),
                   ("schedule.delete", ids["ada"], "user:ada", sid)]


def test_a_key_without_the_ask_scope_changes_no_schedule(client, auth, settings, people):
    _, name, _ = people
    sid = client.post("/v1/schedules", headers=auth, json=DAILY).get_json()["schedule_id"]
    narrow = key_for(settings, name, scopes=["datasets"])
    assert client.post("/v1/schedules", headers=narrow, json=DAILY).status_code == 403
    assert client.patch(f"/v1/schedules/{sid}", headers=narrow,
                        json={"paused": True}).status_code == 403
    assert client.post(f"/v1/schedules/{sid}/run", headers=narrow).status_code == 403
    assert client.delete(f"/v1/schedules/{sid}", headers=narrow).status_code == 403
    assert client.get(f"/v1/schedules/{sid}", headers=auth).get_json()["paused"] is False


def test_a_run_is_the_owners_batch_and_a_traced_span(client, auth, settings, people,
                                                       monkeypatch):
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setitem(tracing._state, "provider", provider)
    monkeypatch.setitem(tracing._state, "tracer", provider.get_tracer("test"))

    tenant_id, _, ids = people
    sid = client.post("/v1/schedules", headers=acting(auth, "ann"),
                      json=DAILY).get_json()["schedule_id"]
    run_id, status = run_once(settings, tenant_id, sid)
    assert status == "running"
    sessions = session_factory(settings.database_url)

    with sessions() as s:
        batch = s.get(Batch, s.get(ScheduleRun, run_id).batch_id)
        assert batch.user_id == ids["ann"]
        assert set(s.scalars(select(Job.user_id).where(Job.batch_id == batch.id))) == {
            ids["ann"]}
    [span] = [x for x in exporter.get_finished_spans() if x.name == "schedule_run"]
    assert span.attributes["sunrise.schedule.id"] == sid
    assert span.attributes["sunrise.tenant.id"] == str(tenant_id)
    assert span.attributes["sunrise.outcome"] == "running"


@pytest.mark.usefixtures("celery_worker")
def test_a_dataset_not_shared_with_the_user_is_not_there_to_schedule(client, auth, settings,
                                                                     people):
    tenant_id, _, _ = people
    dataset_id = upload(client, auth, "Sales", ("sales.csv", SALES)).get_json()["dataset_id"]
    assert wait_imported(client, auth, dataset_id)["status"] == "ready"
    assert client.patch(f"/v1/datasets/{dataset_id}", headers=auth,
                        json={"access": {"users": ["ann"]}}).status_code == 200
    on_sales = {**DAILY, "dataset_id": dataset_id}

    refused = client.post("/v1/schedules", headers=acting(auth, "bob"), json=on_sales)
    assert refused.status_code == 404 and dataset_id in refused.get_json()["detail"]
    assert client.get("/v1/schedules", headers=acting(auth, "bob")).get_json()[
        "schedules"] == []
    assert client.get(f"/v1/datasets/{dataset_id}/verified-queries",
                      headers=acting(auth, "bob")).status_code == 404
    assert client.get(f"/v1/datasets/{dataset_id}/verified-queries",
                      headers=acting(auth, "ann")).status_code == 200
    bobs = client.post("/v1/schedules", headers=acting(auth, "bob"), json=DAILY)
    moved = client.patch(f"/v1/schedules/{bobs.get_json()['schedule_id']}",
                         headers=acting(auth, "bob"), json={"dataset_id": dataset_id})
    assert moved.status_code == 404

    # Ann's schedule runs as Ann: once the dataset is no longer hers, its run fails.
    sid = client.post("/v1/schedules", headers=acting(auth, "ann"),
                      json=on_sales).get_json()["schedule_id"]
    assert client.patch(f"/v1/datasets/{dataset_id}", headers=auth,
                        json={"access": {"users": ["ada"]}}).status_code == 200
    run_id, status = run_once(settings, tenant_id, sid)
    assert status == "failed"
    sessions = session_factory(settings.database_url)
    with sessions() as s:
        run = s.get(ScheduleRun, run_id)
        assert run.batch_id is None and dataset_id in run.reason


@pytest.mark.usefixtures("celery_worker")
def test_a_condition_sees_the_data_as_the_schedules_user(client, auth, settings, people):
    tenant_id, _, _ = people
    dataset_id = upload(client, auth, "Sales", ("sales.csv", SALES)).get_json()["dataset_id"]
    assert wait_imported(client, auth, dataset_id)["status"] == "ready"
    policed = client.patch(f"/v1/datasets/{dataset_id}", headers=auth, json={
        "policies": [{"table": "sales", "filter": "region = 'north'"}]})
    assert policed.status_code == 200, policed.get_data(as_text=True)
    # 30 in all; 10 in the north, all Ann's row policy lets her see.
    body = {**DAILY, "dataset_id": dataset_id,
            "condition": {"sql": "SELECT sum(revenue) FROM sales", "op": ">", "value": 15}}
    sid = client.post("/v1/schedules", headers=acting(auth, "ann"),
                      json=body).get_json()["schedule_id"]
    run_id, status = run_once(settings, tenant_id, sid)
    assert status == "skipped"
    with session_factory(settings.database_url)() as s:
        assert s.get(ScheduleRun, run_id).condition_value == 10
