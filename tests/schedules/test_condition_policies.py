"""A schedule's condition runs as its owner: an analyst under ``region = {user.region}``
gets the value of their own rows (recorded on the run and shown in its view), never the
unfiltered aggregate; a schedule saved with the tenant's key (no user) reads every row,
as the tenant's jobs do. Real import on the worker, the real sandbox, the real runner."""
from __future__ import annotations

import pytest
from sqlalchemy import select

from shared.db import session_scope
from shared.events import EventLog
from shared.models import ScheduleRun, new_id, utcnow
from shared.redis_client import redis_for
from tests.people.helpers import make_user, tenant_of
from tests.utils.datasets import upload, wait_imported
from worker.schedules.runner import ScheduleRunner

pytestmark = pytest.mark.usefixtures("celery_worker")

SALES = "region,amount\n" + "".join(f"{r},{i}\n" for i in range(1, 4) for r in ("EU", "US", "APAC"))
EU_TOTAL, ALL_TOTAL = 6.0, 18.0


@pytest.fixture
def dataset_id(client, auth) -> str:
    created = upload(client, auth, "policed sales", ("sales.csv", SALES))
    dataset_id = wait_imported(client, auth, created.get_json()["dataset_id"])["dataset_id"]
    response = client.patch(f"/v1/datasets/{dataset_id}", headers=auth, json={
        "policies": [{"table": "sales", "filter": "region = {user.region}"}]})
    assert response.status_code == 200, response.get_data(as_text=True)
    return dataset_id


def _condition_value(client, headers, settings, dataset_id) -> tuple[str, float | None]:
    """Save a schedule whose condition never holds (so no batch starts), run one slot of
    it, and return the run's status and condition value as its view shows them."""
    response = client.post("/v1/schedules", headers=headers, json={
        "name": "Revenue watch", "questions": ["Revenue by region?"], "cron": "0 7 * * 1",
        "timezone": "UTC", "dataset_id": dataset_id,
        "deliver": [{"type": "webhook", "url": "http://127.0.0.1:9/hook"}],
        "condition": {"sql": "SELECT sum(amount) FROM sales", "op": ">", "value": 1000}})
    assert response.status_code == 201, response.get_data(as_text=True)
    schedule = response.get_json()
    with session_scope(settings.database_url) as s:
        run_id = new_id()
        s.add(ScheduleRun(id=run_id, schedule_id=schedule["schedule_id"],
                          tenant_id=tenant_of(settings, headers["Authorization"][7:])[0],
                          slot=utcnow(), manual=True, status="running", created_at=utcnow()))
    runner = ScheduleRunner(settings, None, EventLog(redis_for(settings.redis_url)))
    assert runner.run(run_id) == "skipped"
    (run,) = client.get(f"/v1/schedules/{schedule['schedule_id']}/runs",
                        headers=headers).get_json()["runs"]
    return run["status"], run["condition_value"]


def test_the_condition_of_an_analyst_under_a_policy_reads_only_their_rows(
        client, auth, settings, tenant_key, dataset_id):
    tenant_id, _name = tenant_of(settings, tenant_key)
    make_user(settings, tenant_id, "eu-analyst", "analyst", attributes={"region": "EU"})
    as_analyst = {**auth, "Sunrise-User": "eu-analyst"}
    assert _condition_value(client, as_analyst, settings, dataset_id) == ("skipped", EU_TOTAL)
    assert _condition_value(client, auth, settings, dataset_id) == ("skipped", ALL_TOTAL)


def test_a_condition_reading_around_the_policy_fails_the_run(client, auth, settings,
                                                             tenant_key, dataset_id):
    tenant_id, _name = tenant_of(settings, tenant_key)
    make_user(settings, tenant_id, "eu-analyst", "analyst", attributes={"region": "EU"})
    as_analyst = {**auth, "Sunrise-User": "eu-analyst"}
    response = client.post("/v1/schedules", headers=as_analyst, json={
        "name": "Around", "questions": ["Revenue?"], "cron": "0 7 * * 1", "timezone": "UTC",
        "dataset_id": dataset_id, "deliver": [{"type": "webhook", "url": "http://127.0.0.1:9/h"}],
        "condition": {"sql": "SELECT estimated_size FROM duckdb_tables()", "op": ">",
                      "value": 0}})
    assert response.status_code == 201, response.get_data(as_text=True)
    sid = response.get_json()["schedule_id"]
    with session_scope(settings.database_url) as s:
        run_id = new_id()
        s.add(ScheduleRun(id=run_id, schedule_id=sid, tenant_id=tenant_id, slot=utcnow(),
                          manual=True, status="running", created_at=utcnow()))
    runner = ScheduleRunner(settings, None, EventLog(redis_for(settings.redis_url)))
    assert runner.run(run_id) == "failed"
    (run,) = client.get(f"/v1/schedules/{sid}/runs", headers=as_analyst).get_json()["runs"]
    assert run["condition_value"] is None and "row policies" in run["reason"], run


def test_the_report_runs_as_the_owner_and_not_on_a_dataset_no_longer_granted(
        client, auth, settings, tenant_key, dataset_id):
    """The run's batch and jobs belong to the owner (the worker then applies the owner's
    policies to each job, tests/policies/test_policed_jobs.py); once the dataset is no
    longer granted to them, a run fails naming it and starts nothing."""
    from shared.models import Batch, Job

    tenant_id, _name = tenant_of(settings, tenant_key)
    user_id = make_user(settings, tenant_id, "eu-analyst", "analyst", attributes={"region": "EU"})
    as_analyst = {**auth, "Sunrise-User": "eu-analyst"}
    response = client.post("/v1/schedules", headers=as_analyst, json={
        "name": "Report", "questions": ["Revenue?", "Top region?"], "cron": "0 7 * * 1",
        "timezone": "UTC", "dataset_id": dataset_id,
        "deliver": [{"type": "webhook", "url": "http://127.0.0.1:9/h"}],
        "condition": {"sql": "SELECT sum(amount) FROM sales", "op": ">", "value": 1}})
    assert response.status_code == 201, response.get_data(as_text=True)
    sid = response.get_json()["schedule_id"]
    runner = ScheduleRunner(settings, None, EventLog(redis_for(settings.redis_url)))

    def run_once() -> ScheduleRun:
        with session_scope(settings.database_url) as s:
            run_id = new_id()
            s.add(ScheduleRun(id=run_id, schedule_id=sid, tenant_id=tenant_id, slot=utcnow(),
                              manual=True, status="running", created_at=utcnow()))
        runner.run(run_id)
        with session_scope(settings.database_url) as s:
            run = s.get(ScheduleRun, run_id)
            s.expunge(run)
            return run

    run = run_once()
    assert run.status == "running" and run.condition_value == EU_TOTAL, run.reason
    with session_scope(settings.database_url) as s:
        assert s.get(Batch, run.batch_id).user_id == user_id
        owners = set(s.scalars(select(Job.user_id).where(Job.batch_id == run.batch_id)))
    assert owners == {user_id}
    assert client.patch(f"/v1/datasets/{dataset_id}", headers=auth,
                        json={"access": {"groups": ["finance"]}}).status_code == 200
    refused = run_once()
    assert refused.status == "failed" and refused.batch_id is None
    assert refused.reason.startswith(f"condition: No dataset {dataset_id}"), refused.reason
