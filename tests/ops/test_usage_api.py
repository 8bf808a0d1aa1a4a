"""GET /v1/usage: aggregates from MariaDB equal the sums of the per-call rows, per tenant."""
from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal

import pytest
from sqlalchemy import select

from shared.db import session_scope
from shared.keys import get_or_create_tenant
from shared.models import LlmCall, new_id
from tests.utils.jobs import create_job, job_view

FIELDS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens")


def seed_calls(settings, tenant_id: int, rows: list[tuple[str, str, str, int]]) -> list[LlmCall]:
    """Insert per-call rows (job, model, created_at, n); the figures grow with n."""
    calls = [LlmCall(job_id=job, tenant_id=tenant_id, round=0, model=model,
                     created_at=dt.datetime.fromisoformat(at), input_tokens=100 * n,
                     output_tokens=10 * n, cache_read_tokens=1000 * n,
                     cache_creation_tokens=7 * n, cost_usd=Decimal("0.00123457") * n)
             for job, model, at, n in rows]
    with session_scope(settings.database_url) as s:
        s.add_all(calls)
    return calls


def expected(calls: list[LlmCall]) -> dict:
    unpriced = sum(c.cost_usd is None for c in calls)
    out = {"jobs": len({c.job_id for c in calls}), "llm_calls": len(calls),
           **{f: sum(getattr(c, f) for c in calls) for f in FIELDS},
           "cost_usd": None if unpriced else float(sum(c.cost_usd for c in calls)),
           "unpriced_calls": unpriced}
    prompt = out["input_tokens"] + out["cache_read_tokens"] + out["cache_creation_tokens"]
    out["cache_hit_ratio"] = round(out["cache_read_tokens"] / prompt, 6)
    return out


def usage(client, auth, **query) -> dict:
    resp = client.get("/v1/usage", query_string=query, headers=auth)
    assert resp.status_code == 200, resp.get_data(as_text=True)
    return resp.get_json()


def test_usage_by_day_model_and_tenant_equals_the_per_call_sums(client, settings, new_tenant):
    auth, tenant_id, name = new_tenant
    j1, j2, j3 = new_id(), new_id(), new_id()
    calls = seed_calls(settings, tenant_id, [
        (j1, "claude-a", "2024-03-01T09:00:00", 1),
        (j1, "claude-a", "2024-03-01T09:00:05", 2),
        (j2, "claude-b", "2024-03-01T23:59:59", 3),
        (j2, "claude-b", "2024-03-02T00:00:01", 4),  # the same job, past midnight
        (j3, "claude-a", "2024-03-05T12:00:00", 5),
    ])
    with session_scope(settings.database_url) as s:  # another tenant's calls never count
        other = get_or_create_tenant(s, f"other-{uuid.uuid4().hex[:8]}").id
    seed_calls(settings, other, [(new_id(), "claude-a", "2024-03-01T10:00:00", 9)])

    by_day = usage(client, auth, group_by="day", **{"from": "2024-03-01"}, to="2024-03-02")
    assert by_day["group_by"] == "day"
    assert by_day["items"] == [{"key": "2024-03-01", **expected(calls[:3])},
                               {"key": "2024-03-02", **expected(calls[3:4])}]
    assert by_day["totals"] == expected(calls[:4])
    assert by_day["totals"]["jobs"] == 2, "a job spanning midnight counts once in the totals"

    by_model = usage(client, auth, group_by="model")
    a = [c for c in calls if c.model == "claude-a"]
    b = [c for c in calls if c.model == "claude-b"]
    assert by_model["items"] == [{"key": "claude-a", **expected(a)},
                                 {"key": "claude-b", **expected(b)}]
    assert by_model["totals"] == expected(calls)

    by_tenant = usage(client, auth, group_by="tenant")
    assert by_tenant["items"] == [{"key": name, **expected(calls)}]

    # A date-time bound is exact and its end exclusive.
    window = usage(client, auth, **{"from": "2024-03-01T09:00:05Z"}, to="2024-03-02T00:00:01")
    assert window["totals"] == expected(calls[1:3])
    empty = usage(client, auth, **{"from": "2030-01-01"})
    assert empty["items"] == [] and empty["totals"]["llm_calls"] == 0
    assert empty["totals"]["cost_usd"] == 0 and empty["totals"]["cache_hit_ratio"] == 0


def test_usage_of_a_real_job_equals_its_rows_and_its_job_usage(client, settings, new_tenant, runner,
                                                               fake_llm):
    auth, tenant_id, name = new_tenant
    job_id, _ = create_job(settings, "How many flights did each carrier fly?", tenant=name)
    assert runner.run(job_id) == "succeeded"
    with session_scope(settings.database_url) as s:
        calls = s.scalars(select(LlmCall).where(LlmCall.tenant_id == tenant_id)).all()
    totals = usage(client, auth)["totals"]
    assert totals == expected(calls)
    job = job_view(settings, job_id)["usage"]
    assert {f: totals[f] for f in FIELDS} == {f: job[f] for f in FIELDS}
    assert totals["cost_usd"] == pytest.approx(job["cost_usd"], abs=1e-8)


@pytest.mark.parametrize("query", [{"group_by": "week"}, {"from": "yesterday"},
                                   {"from": "2024-03-02", "to": "2024-03-01"}, {"limit": "3"}])
def test_bad_queries_are_422_problems(client, new_tenant, query):
    auth, _, _ = new_tenant
    resp = client.get("/v1/usage", query_string=query, headers=auth)
    assert resp.status_code == 422 and resp.mimetype == "application/problem+json"


def test_usage_needs_a_key_and_is_in_the_openapi_spec(client):
    assert client.get("/v1/usage").status_code == 401
    params = client.get("/openapi.json").get_json()["paths"]["/v1/usage"]["get"]["parameters"]
    assert {p["name"] for p in params} >= {"group_by", "from", "to"}


def test_a_call_to_an_unpriced_model_makes_its_groups_cost_null(client, settings, new_tenant):
    auth, tenant_id, _ = new_tenant
    calls = seed_calls(settings, tenant_id, [(new_id(), "claude-a", "2024-04-01T09:00:00", 1),
                                             (new_id(), "claude-x", "2024-04-01T10:00:00", 2)])
    with session_scope(settings.database_url) as s:  # claude-x has no known price
        s.execute(LlmCall.__table__.update().where(LlmCall.id == calls[1].id)
                  .values(cost_usd=None))
    calls[1].cost_usd = None
    by_model = usage(client, auth, group_by="model")
    assert by_model["items"] == [{"key": "claude-a", **expected(calls[:1])},
                                 {"key": "claude-x", **expected(calls[1:])}]
    assert by_model["items"][1]["cost_usd"] is None
    assert by_model["totals"]["cost_usd"] is None and by_model["totals"]["unpriced_calls"] == 1
