"""``sunrise.client`` on datasets, against the real API (gunicorn), the real Celery worker
(``datasets`` queue), MariaDB, Redis and DuckDB; only the model is the offline one."""
from __future__ import annotations

import uuid

import pytest

from sunrise.client import ApiError, SunriseClient

ORDERS_CSV = """order_id,region,amount,shipped_on
1,north,10.5,2024-01-03
2,south,NA,2024-01-09
3,north,4.5,2024-02-01
4,east,7.0,NA
"""
REGIONS_NDJSON = '{"region": "north", "manager": "Ada"}\n{"region": "south", "manager": "Bo"}\n'


@pytest.fixture
def api(live_api, celery_worker):
    return live_api


def _client(api, tenant: str | None = None) -> SunriseClient:
    from shared.db import session_scope
    from shared.keys import create_key

    with session_scope(api.settings.database_url) as s:
        key = create_key(s, tenant or f"client-{uuid.uuid4().hex[:10]}")
    return SunriseClient(api.base_url, key)


@pytest.fixture
def client(api):
    with _client(api) as c:
        yield c


@pytest.fixture
def files(tmp_path):
    orders, regions = tmp_path / "orders.csv", tmp_path / "regions.ndjson"
    orders.write_text(ORDERS_CSV)
    regions.write_text(REGIONS_NDJSON)
    return orders, regions


def _imported(client: SunriseClient, files) -> tuple[dict, list]:
    accepted = client.create_dataset("shop", files)
    assert accepted["status"] == "importing"
    events = list(client.dataset_events(accepted["dataset_id"]))
    return client.dataset(accepted["dataset_id"]), events


def test_files_upload_import_with_progress_and_answer_questions(client, files):
    dataset, events = _imported(client, files)
    assert events[-1].event == "ready"
    assert {e.data["table"] for e in events if e.event == "progress"} == {"orders", "regions"}
    assert (dataset["status"], dataset["version"]) == ("ready", 1)
    tables = {t["name"]: t for t in dataset["tables"]}
    assert tables["orders"]["rows"] == 4 and tables["regions"]["rows"] == 2
    types = {c["name"]: c["type"] for c in tables["orders"]["columns"]}
    assert types["amount"] == "DOUBLE" and types["shipped_on"] == "DATE"

    job = client.ask("What is the total amount per region?", dataset_id=dataset["dataset_id"])
    assert job["status"] == "succeeded", job.get("error")
    assert (job["dataset_id"], job["dataset_version"]) == (dataset["dataset_id"], 1)
    (chart,) = job["result"]["charts"]
    totals = {r["region"]: next(v for k, v in r.items() if k != "region") for r in chart["data"]}
    assert totals == {"north": 15.0, "south": None, "east": 7.0}


def test_annotate_default_refresh_and_delete(client, files):
    dataset, _ = _imported(client, files[:1])
    dataset_id = dataset["dataset_id"]
    annotated = client.annotate_dataset(dataset_id, {
        "description": "Web shop orders",
        "tables": {"orders": {"description": "One row per order",
                              "columns": {"amount": "Order value in euros"}}}})
    (orders,) = annotated["tables"]
    assert annotated["description"] == "Web shop orders"
    assert orders["description"] == "One row per order"
    assert next(c for c in orders["columns"] if c["name"] == "amount")["description"] == \
        "Order value in euros"
    with pytest.raises(ApiError) as refused:
        client.annotate_dataset(dataset_id, {"tables": {"orders": {"columns": {"nope": "x"}}}})
    assert refused.value.status == 422 and "nope" in refused.value.problem["detail"]

    client.annotate_dataset(dataset_id, {"default": True})
    (listed,) = client.datasets()
    assert listed["default"] is True
    job = client.ask("How many orders are there?")
    assert job["dataset_id"] == dataset_id, job

    client.refresh_dataset(dataset_id)
    assert list(client.dataset_events(dataset_id))[-1].event == "ready"
    assert client.dataset(dataset_id)["version"] == 2

    client.delete_dataset(dataset_id)
    with pytest.raises(ApiError) as gone:
        client.dataset(dataset_id)
    assert gone.value.status == 404


def test_another_tenants_dataset_is_404_everywhere(api, client, files):
    dataset, _ = _imported(client, files[:1])
    dataset_id = dataset["dataset_id"]
    with _client(api) as stranger:
        for attempt in (lambda: stranger.dataset(dataset_id),
                        lambda: list(stranger.dataset_events(dataset_id)),
                        lambda: stranger.refresh_dataset(dataset_id),
                        lambda: stranger.submit("How many orders are there?",
                                                dataset_id=dataset_id)):
            with pytest.raises(ApiError) as refused:
                attempt()
            assert refused.value.status == 404
        assert stranger.datasets() == []
