"""A viewer under `region = {user.region}` asking "revenue by region": a real job on a real
worker thread, the real sandbox and the offline model over HTTP. Only their region's row
reaches the tool result, the answer and the system prompt; an owner (exempt) asking the
same sees every region, so each assertion fails without the enforcement."""
from __future__ import annotations

import json

import pytest

from engine.datasets import TableProfile
from engine.policies import policies_for_job
from shared.events import EventLog
from shared.principal import Principal, principal_for_job
from shared.redis_client import redis_for
from tests.utils.datasets import upload, wait_imported
from tests.utils.held_jobs import HeldJobs
from tests.utils.jobs import marker, requests_with, tool_calls
from worker.jobs.data_source import TenantDatasets
from worker.jobs.runner import JobRunner

pytestmark = pytest.mark.usefixtures("celery_worker")

SALES = ("region,amount,customer\n"
         + "".join(f"{r},{i * 10},cust-{r}-{i}\n" for i in range(1, 7) for r in ("EU", "US", "APAC")))
BY_REGION = "SELECT region, sum(amount) AS revenue FROM sales GROUP BY region ORDER BY region"
OTHERS = ("'US'", "APAC", "cust-US")


def _eu_viewer(session, job) -> Principal:
    return Principal(tenant_id=job.tenant_id, user_id=9, external_id="eu-1", role="viewer",
                     attributes={"region": "EU"})


@pytest.fixture
def dataset_id(client, auth):
    accepted = upload(client, auth, "Sales", ("sales.csv", SALES))
    dataset_id = wait_imported(client, auth, accepted.get_json()["dataset_id"])["dataset_id"]
    response = client.patch(f"/v1/datasets/{dataset_id}", headers=auth, json={
        "policies": [{"table": "sales", "filter": "region = {user.region}"}],
        "masks": [{"table": "sales", "column": "customer", "mask": "redact"}],
        "examples": [{"question": "Revenue of the US?",
                      "sql": "SELECT sum(amount) FROM sales WHERE region = 'US'"}]})
    assert response.status_code == 200, response.get_data(as_text=True)
    return dataset_id


def _ask(settings, tenant_key, celery_app, fake_llm, dataset_id, principal_of):
    tag = marker()
    scenario = fake_llm.scenario(f"policy-{tag[3:-1]}", [
        {"tool_calls": [{"sql": BY_REGION}]},
        {"tool_calls": [{"sql": "SELECT DISTINCT customer FROM sales"}]},
        {"text": json.dumps({"answerText": "Revenue by region as queried.", "charts": []})},
    ])
    data = TenantDatasets(settings, principal_of=principal_of)
    try:
        with HeldJobs(settings, tenant_key, celery_app) as held:
            job = held.hold(f"{scenario} {tag} revenue by region", dataset_id=dataset_id)
            runner = JobRunner(settings, events=EventLog(redis_for(settings.redis_url)),
                               data=data)
            assert runner.run(job["job_id"]) == "succeeded"
    finally:
        data.close()
    (first, *_, last) = requests_with(fake_llm, tag)
    system = "".join(block["text"] for block in first["system"]) \
        if isinstance(first["system"], list) else first["system"]
    return system, str(last["messages"]), tool_calls(settings, job["job_id"])


def test_a_viewer_sees_only_their_region_in_results_and_prompt(settings, tenant_key,
                                                              celery_app, fake_llm, dataset_id):
    system, results, calls = _ask(settings, tenant_key, celery_app, fake_llm, dataset_id,
                                  _eu_viewer)
    by_region, customers = calls
    assert not by_region.is_error and by_region.rows == 1 and customers.rows == 1
    assert "EU,210" in results and "[redacted]" in results and "cust-EU" not in results
    assert "'EU'" in system
    for hidden in (*OTHERS, "US,"):
        assert hidden not in results and hidden not in system, hidden
    assert "Revenue of the US?" not in system


def test_an_owner_is_exempt_and_sees_every_region(settings, tenant_key, celery_app, fake_llm,
                                                  dataset_id):
    system, results, calls = _ask(settings, tenant_key, celery_app, fake_llm, dataset_id,
                                  principal_for_job)
    assert calls[0].rows == 3 and "APAC" in results and "cust-US" in results
    assert "APAC" in system and "'US'" in system


def test_profiles_are_recomputed_under_the_policy(settings, dataset_id):
    data = TenantDatasets(settings, principal_of=_eu_viewer)
    try:
        from tests.datasets.test_data_source import _job

        job = _job(dataset_id, 1)
        policed = data.for_job(job)
        assert policed.sandbox.run("SELECT count(*) FROM sales").rows == [(6,)]
        profiles = data._tables[(dataset_id, 1)]
        assert isinstance(profiles[0], TableProfile) and profiles[0].rows == 18
        assert "sales (6 rows)" in policed.system_prompt or "6 rows" in policed.system_prompt
    finally:
        data.close()


def test_the_policies_applied_to_a_job_are_described_for_the_audit(settings, dataset_id):
    from shared.db import session_scope

    job = _job_for(dataset_id)
    data = TenantDatasets(settings, principal_of=_eu_viewer)
    try:
        assert data.for_job(job).policies == ("sales: rows where region = 'EU'",
                                              "sales.customer: redact")
    finally:
        data.close()
    with session_scope(settings.database_url) as s:  # the tenant's key: an owner, exempt
        assert policies_for_job(s, job) == []
        assert policies_for_job(s, _job_for(None)) == []


def _job_for(dataset_id):
    from tests.datasets.test_data_source import _job

    return _job(dataset_id, 1 if dataset_id else None)


def test_a_stored_policy_that_no_longer_parses_fails_the_job_saying_so(settings, dataset_id):
    from shared.db import session_scope
    from shared.errors import JobFailure
    from shared.models import Dataset

    with session_scope(settings.database_url) as s:
        s.get(Dataset, dataset_id).policies = [{"table": "sales", "filter": "region = = 1"}]
    data = TenantDatasets(settings, principal_of=_eu_viewer)
    try:
        with pytest.raises(JobFailure) as failed:
            data.for_job(_job_for(dataset_id))
        assert failed.value.code == "policy_invalid" and "admin" in str(failed.value.detail)
    finally:
        data.close()
