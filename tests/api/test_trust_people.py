"""Feedback and verified queries under people's roles (docs/people.md): another user's
job is a 404 to rate for a viewer or analyst; the feedback list and verified-query
changes need an admin (and, for the changes, the ``datasets`` scope); keeping and
forgetting a verified query is audited."""
from __future__ import annotations

import pytest
from sqlalchemy import func, select, update

from shared.audit import entries
from shared.db import session_scope
from shared.job_state import create_job
from shared.models import Job, JobFeedback, VerifiedQuery
from tests.people.helpers import acting, key_for, team
from tests.utils.datasets import upload, wait_imported

SALES = "region,revenue\nnorth,10\nsouth,20\n"


@pytest.fixture
def people(settings, auth):
    return team(settings, auth)


def test_another_users_job_is_not_there_to_rate(client, auth, settings, people):
    tenant_id, _, ids = people
    with session_scope(settings.database_url) as s:
        job_id = create_job(s, tenant_id=tenant_id, conversation_id=None,
                            message="Revenue by region?", model="m", user_id=ids["ann"])["id"]
        s.execute(update(Job).where(Job.id == job_id).values(status="succeeded"))
    for other in ("bob", "vic"):
        refused = client.post(f"/v1/jobs/{job_id}/feedback", headers=acting(auth, other),
                              json={"rating": "down"})
        assert refused.status_code == 404 and job_id in refused.get_json()["detail"]
    assert client.post(f"/v1/jobs/{job_id}/feedback", headers=acting(auth, "ann"),
                       json={"rating": "up"}).status_code == 201
    assert client.post(f"/v1/jobs/{job_id}/feedback", headers=acting(auth, "ada"),
                       json={"rating": "down"}).status_code == 201
    with session_scope(settings.database_url) as s:
        assert set(s.scalars(select(JobFeedback.user_id).where(
            JobFeedback.job_id == job_id))) == {ids["ann"], ids["ada"]}

    refused = client.get("/v1/datasets/any/feedback", headers=acting(auth, "ann"))
    assert refused.status_code == 403 and "admin" in refused.get_json()["detail"]
    assert client.get("/v1/datasets/any/feedback", headers=acting(auth, "ada")).status_code == 200


@pytest.mark.usefixtures("celery_worker")
def test_verified_queries_need_an_admin_and_are_audited(client, auth, settings, people):
    tenant_id, name, ids = people
    dataset_id = upload(client, auth, "Sales", ("sales.csv", SALES)).get_json()["dataset_id"]
    assert wait_imported(client, auth, dataset_id)["status"] == "ready"
    url = f"/v1/datasets/{dataset_id}/verified-queries"
    body = {"question": "Revenue by region?",
            "sql": "SELECT region, sum(revenue) FROM sales GROUP BY 1"}

    refused = client.post(url, headers=acting(auth, "ann"), json=body)
    assert refused.status_code == 403 and "admin" in refused.get_json()["detail"]
    no_scope = key_for(settings, name, scopes=["ask"])
    assert client.post(url, headers=no_scope, json=body).status_code == 403
    kept = client.post(url, headers=acting(auth, "ada"), json=body)
    assert kept.status_code == 201, kept.get_data(as_text=True)
    vq_id = kept.get_json()["verified_query_id"]
    assert client.delete(f"{url}/{vq_id}", headers=acting(auth, "ann")).status_code == 403
    assert client.delete(f"{url}/{vq_id}", headers=no_scope).status_code == 403
    with session_scope(settings.database_url) as s:
        assert s.scalar(select(func.count()).select_from(VerifiedQuery)
                        .where(VerifiedQuery.dataset_id == dataset_id)) == 1
    assert client.delete(f"{url}/{vq_id}", headers=acting(auth, "ada")).status_code == 204

    with session_scope(settings.database_url) as s:
        log = [(e.action, e.user_id, e.target, e.details) for e in entries(s, tenant_id)
               if e.action.startswith("verified_query.")]
    assert log == [("verified_query.create", ids["ada"], vq_id, {"dataset_id": dataset_id}),
                   ("verified_query.delete", ids["ada"], vq_id, {"dataset_id": dataset_id})]
