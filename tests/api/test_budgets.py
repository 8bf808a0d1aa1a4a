"""Cost budgets: PATCH/GET /v1/tenant, 429 budget_exceeded for new work over a block
budget, accepted work kept, the spend metrics (real MariaDB, Redis and worker)."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from api.schemas.tenant import TenantPatch
from api.services.tenant import update_tenant
from shared.budgets import Periods, admit_work
from shared.db import session_scope
from shared.errors import BudgetExceeded, Forbidden
from shared.keys import create_key
from shared.models import Job, LlmCall, TenantBudget, new_id, utcnow
from shared.principal import Principal


def _spend(settings, tenant_id: int, usd: str, at: dt.datetime | None = None) -> None:
    with session_scope(settings.database_url) as s:
        s.add(LlmCall(job_id=new_id(), tenant_id=tenant_id, round=0, model="m",
                      created_at=at or utcnow(), cost_usd=Decimal(usd)))


def _problem(resp, status: int) -> dict:
    assert resp.status_code == status, resp.get_data(as_text=True)
    assert resp.mimetype == "application/problem+json"
    return resp.get_json()


def test_a_tenant_without_a_budget_shows_its_spend(client, settings, new_tenant):
    auth, tenant_id, name = new_tenant
    _spend(settings, tenant_id, "1.25")
    _spend(settings, tenant_id, "0.50")
    body = client.get("/v1/tenant", headers=auth).get_json()
    assert body["tenant_id"] == tenant_id and body["name"] == name
    assert body["budget"] is None
    assert body["spend"]["today_usd"] == pytest.approx(1.75)
    assert body["spend"]["month_usd"] == pytest.approx(1.75)


def test_spend_of_earlier_days_counts_for_the_month_only(settings, new_tenant):
    _auth, tenant_id, _ = new_tenant
    now = dt.datetime(2026, 12, 15, 12, 0)
    _spend(settings, tenant_id, "2", at=dt.datetime(2026, 12, 1, 0, 0))
    _spend(settings, tenant_id, "3", at=dt.datetime(2026, 12, 15, 0, 0, 1))
    _spend(settings, tenant_id, "100", at=dt.datetime(2026, 11, 30, 23, 59, 59))
    with session_scope(settings.database_url) as s:
        s.add(TenantBudget(tenant_id=tenant_id, monthly_usd=Decimal(5), daily_usd=None,
                           on_exceed="block"))
    with session_scope(settings.database_url) as s, pytest.raises(BudgetExceeded) as refused:
        admit_work(s, tenant_id, now=now)
    assert refused.value.extra["spend_usd"] == 5.0
    assert refused.value.extra["resets_at"] == "2027-01-01T00:00:00Z"
    with session_scope(settings.database_url) as s:
        admit_work(s, tenant_id, now=dt.datetime(2027, 1, 1))  # a new month, nothing spent
    assert Periods.at(now).day_reset == dt.datetime(2026, 12, 16)


def test_over_a_block_budget_new_work_gets_429_and_accepted_work_stays(client, settings, new_tenant):
    auth, tenant_id, _ = new_tenant
    first = client.post("/v1/jobs", json={"message": "How many flights?"},
                        headers={**auth, "Idempotency-Key": "k1"})
    assert first.status_code == 202
    resp = client.patch("/v1/tenant", json={"budget": {"monthly_usd": 200, "daily_usd": 2,
                                                        "on_exceed": "block"}}, headers=auth)
    assert resp.status_code == 200, resp.get_data(as_text=True)
    assert resp.get_json()["budget"] == {"monthly_usd": 200.0, "daily_usd": 2.0,
                                         "on_exceed": "block"}
    _spend(settings, tenant_id, "2.5")

    problem = _problem(client.post("/v1/jobs", json={"message": "And now?"}, headers=auth), 429)
    assert problem["type"].endswith("/budget_exceeded")
    assert problem["period"] == "day" and problem["limit_usd"] == 2.0
    # The accepted job may have run meanwhile (a worker in the session): its cost counts.
    assert problem["spend_usd"] >= 2.5
    reset = Periods.at(utcnow()).day_reset.isoformat() + "Z"
    assert problem["resets_at"] == reset
    assert "daily budget of 2.00 USD" in problem["detail"]
    assert f"{problem['spend_usd']:.2f} USD this day" in problem["detail"]
    assert reset in problem["detail"]
    batch = _problem(client.post("/v1/batches", json={"questions": ["a", "b"]}, headers=auth),
                     429)
    assert batch["type"].endswith("/budget_exceeded")
    # The job accepted before is answered again for its Idempotency-Key, and still queued.
    again = client.post("/v1/jobs", json={"message": "How many flights?"},
                        headers={**auth, "Idempotency-Key": "k1"})
    assert again.status_code == 202
    assert again.get_json()["job_id"] == first.get_json()["job_id"]
    with session_scope(settings.database_url) as s:
        jobs = s.query(Job).filter(Job.tenant_id == tenant_id).all()
    assert [j.id for j in jobs] == [first.get_json()["job_id"]]


def test_a_warn_budget_admits_and_removing_a_budget_lifts_the_block(client, settings, new_tenant):
    auth, tenant_id, _ = new_tenant
    _spend(settings, tenant_id, "10")
    client.patch("/v1/tenant", json={"budget": {"monthly_usd": 1, "on_exceed": "warn"}},
                 headers=auth)
    assert client.post("/v1/jobs", json={"message": "q1"}, headers=auth).status_code == 202
    client.patch("/v1/tenant", json={"budget": {"monthly_usd": 1}}, headers=auth)
    assert client.get("/v1/tenant", headers=auth).get_json()["budget"]["on_exceed"] == "block"
    _problem(client.post("/v1/jobs", json={"message": "q2"}, headers=auth), 429)
    resp = client.patch("/v1/tenant", json={"budget": None}, headers=auth)
    assert resp.get_json()["budget"] is None
    assert client.post("/v1/jobs", json={"message": "q3"}, headers=auth).status_code == 202


@pytest.mark.parametrize("body", [
    {"budget": {"monthly_usd": -1}},
    {"budget": {"monthly_usd": "lots"}},
    {"budget": {"monthly_usd": 5, "on_exceed": "explode"}},
    {"budget": {"monthly_usd": 5, "weekly_usd": 1}},
    {"budget": {"on_exceed": "block"}},
    {"budgets": {"monthly_usd": 5}},
    {},
])
def test_bad_budgets_are_refused_and_change_nothing(client, settings, new_tenant, body):
    auth, tenant_id, _ = new_tenant
    problem = _problem(client.patch("/v1/tenant", json=body, headers=auth), 422)
    assert problem["detail"]
    with session_scope(settings.database_url) as s:
        assert s.get(TenantBudget, tenant_id) is None


def test_only_owners_change_the_budget(settings, new_tenant):
    _auth, tenant_id, _ = new_tenant
    body = TenantPatch(budget={"monthly_usd": 5})
    with session_scope(settings.database_url) as s, pytest.raises(Forbidden):
        update_tenant(s, Principal(tenant_id=tenant_id, user_id=1, role="admin"), body,
                      "user:ada")
    with session_scope(settings.database_url) as s:
        assert s.get(TenantBudget, tenant_id) is None


def test_a_key_without_the_admin_scope_cannot_lift_or_set_the_budget(client, settings,
                                                                      new_tenant):
    # A tenant key given to an app to ask questions acts as the owner with only its
    # scopes: lifting the budget is a setting change, as unknown_users is.
    auth, tenant_id, name = new_tenant
    assert client.patch("/v1/tenant", headers=auth, json={
        "budget": {"monthly_usd": 5}}).status_code == 200
    with session_scope(settings.database_url) as s:
        asker = {"Authorization": f"Bearer {create_key(s, name, scopes=['ask', 'datasets'])}"}
    for budget in (None, {"monthly_usd": 1_000_000}):
        problem = _problem(client.patch("/v1/tenant", headers=asker,
                                        json={"budget": budget}), 403)
        assert "'admin' scope" in problem["detail"]
    with session_scope(settings.database_url) as s:
        assert s.get(TenantBudget, tenant_id).monthly_usd == Decimal(5)


def test_metrics_export_spend_and_budget_per_tenant(client, settings, new_tenant):
    auth, tenant_id, name = new_tenant
    _spend(settings, tenant_id, "0.75")
    client.patch("/v1/tenant", json={"budget": {"monthly_usd": 20, "daily_usd": 3}},
                 headers=auth)
    text = client.get("/metrics").get_data(as_text=True)
    assert f'sunrise_tenant_spend_usd{{period="month",tenant="{name}"}} 0.75' in text
    assert f'sunrise_tenant_spend_usd{{period="day",tenant="{name}"}} 0.75' in text
    assert f'sunrise_tenant_budget_usd{{period="month",tenant="{name}"}} 20.0' in text


@pytest.mark.usefixtures("celery_worker")
def test_a_running_job_finishes_after_its_tenant_goes_over_budget(client, settings, new_tenant):
    auth, tenant_id, _ = new_tenant
    job_id = client.post("/v1/jobs", json={"message": "How many flights?"},
                         headers=auth).get_json()["job_id"]
    client.patch("/v1/tenant", json={"budget": {"monthly_usd": 0.01}}, headers=auth)
    _spend(settings, tenant_id, "1")
    _problem(client.post("/v1/jobs", json={"message": "more"}, headers=auth), 429)
    for _ in range(4):  # long-polls of 30 s, bounded
        done = client.get(f"/v1/jobs/{job_id}?wait=30", headers=auth).get_json()
        if done["status"] not in ("queued", "running"):
            break
    assert done["status"] == "succeeded", done
