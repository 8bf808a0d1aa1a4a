"""Dataset access (``PATCH /v1/datasets/{id}`` ``access``) and the job's audit entry, on a
real worker (issue 35): a dataset shared with one user is invisible (404, unlisted,
unaskable) to another viewer; a finished job's entry names its user, dataset, question
and every SQL statement it ran."""
from __future__ import annotations

import pytest
from sqlalchemy import select

from shared.db import session_scope
from shared.models import AuditEntry, ToolCall
from tests.people.helpers import acting, make_user, tenant_of
from tests.utils.datasets import upload, wait_imported
from tests.utils.waiting import wait_for_status

pytestmark = pytest.mark.usefixtures("celery_worker")

SALES = "region,revenue\nnorth,10\nsouth,20\n"


def test_access_limits_who_sees_and_asks_a_dataset_and_jobs_are_audited(
        client, auth, settings, fake_llm):
    tenant_id, _ = tenant_of(settings, auth["Authorization"].split()[1])
    make_user(settings, tenant_id, "bob", groups=["ops"])
    alice, bob = acting(auth, "alice"), acting(auth, "bob")
    accepted = upload(client, auth, "Sales", ("sales.csv", SALES))
    assert accepted.status_code == 202, accepted.get_data(as_text=True)
    dataset_id = accepted.get_json()["dataset_id"]
    assert wait_imported(client, auth, dataset_id)["status"] == "ready"

    # A viewer may not change access; bad access is a 422 and changes nothing.
    assert client.patch(f"/v1/datasets/{dataset_id}", headers=alice,
                        json={"access": {"users": ["alice"]}}).status_code == 403
    bad = client.patch(f"/v1/datasets/{dataset_id}", headers=auth,
                       json={"access": {"users": "alice"}})
    assert bad.status_code == 422
    assert client.get(f"/v1/datasets/{dataset_id}", headers=auth).get_json()["access"] is None

    shared = client.patch(f"/v1/datasets/{dataset_id}", headers=auth,
                          json={"access": {"users": ["alice"], "groups": ["sales"]}})
    assert shared.status_code == 200, shared.get_data(as_text=True)
    assert shared.get_json()["access"] == {"groups": ["sales"], "users": ["alice"]}

    listed = {d["dataset_id"] for d in client.get("/v1/datasets", headers=bob)
              .get_json()["items"]}
    assert dataset_id not in listed
    assert client.get(f"/v1/datasets/{dataset_id}", headers=bob).status_code == 404
    refused = client.post("/v1/jobs", headers=bob, json={"message": "Revenue by region?",
                                                         "dataset_id": dataset_id})
    assert refused.status_code == 404
    assert dataset_id in {d["dataset_id"] for d in client.get(
        "/v1/datasets", headers=alice).get_json()["items"]}

    asked = client.post("/v1/jobs", headers=alice, json={"message": "Revenue by region?",
                                                         "dataset_id": dataset_id})
    assert asked.status_code == 202, asked.get_data(as_text=True)
    job_id = asked.get_json()["job_id"]
    assert wait_for_status(client, alice, job_id, timeout=60)["status"] == "succeeded"

    with session_scope(settings.database_url) as s:
        entries = s.scalars(select(AuditEntry).where(
            AuditEntry.tenant_id == tenant_id).order_by(AuditEntry.id)).all()
        ran = s.scalars(select(ToolCall.sql).where(ToolCall.job_id == job_id,
                                                   ToolCall.tool == "execute_sql")
                        .order_by(ToolCall.id)).all()
    by_action = {e.action: e for e in entries}
    assert {"dataset.create", "dataset.access"} <= set(by_action)
    assert by_action["dataset.access"].details["after"]["users"] == ["alice"]
    (job_entry,) = [e for e in entries if e.action == "job"]
    assert job_entry.target == job_id and job_entry.user_id is not None
    assert job_entry.details["question"] == "Revenue by region?"
    assert job_entry.details["dataset_id"] == dataset_id
    assert job_entry.details["status"] == "succeeded"
    assert ran and job_entry.details["sql"] == list(ran)
    assert "policies" in job_entry.details
