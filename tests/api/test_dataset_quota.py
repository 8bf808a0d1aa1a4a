"""Per-tenant dataset quota (issue 31, item 9): past tenant_max_datasets a new dataset is
429, past tenant_max_bytes an upload or a refresh is 413, the detail gives the usage and
the limit, nothing is kept, deleted datasets free their room, and GET /v1/datasets shows
the usage."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.utils.datasets import upload, wait_imported

pytestmark = pytest.mark.usefixtures("celery_worker")

SMALL = "a,b\n1,2\n3,4\n"


def _client(settings, **limits):
    from api import create_app

    return create_app(settings=settings.model_copy(update=limits)).test_client()


def _kept(settings) -> set[str]:
    """Every file and folder under data_dir (dataset folders, spooled uploads)."""
    root = Path(settings.data_dir)
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def _usage(client, auth) -> dict:
    return client.get("/v1/datasets", headers=auth).get_json()["usage"]


def _problem(resp, status: int) -> dict:
    assert resp.status_code == status, resp.get_data(as_text=True)
    assert resp.mimetype == "application/problem+json"
    return resp.get_json()


def test_past_the_dataset_count_a_new_dataset_is_429_and_a_deleted_one_frees_its_place(
        settings, auth):
    client = _client(settings, tenant_max_datasets=1)
    first = upload(client, auth, "One", ("one.csv", SMALL))
    assert first.status_code == 202, first.get_data(as_text=True)
    dataset_id = first.get_json()["dataset_id"]
    wait_imported(client, auth, dataset_id)
    kept = _kept(settings)
    body = _problem(upload(client, auth, "Two", ("two.csv", SMALL)), 429)
    assert "1 datasets" in body["detail"] and "limit is 1" in body["detail"]
    assert body["usage"]["datasets"] == 1 and body["usage"]["max_datasets"] == 1
    snapshot = client.post("/v1/datasets", headers=auth, json={
        "name": "Live", "source": {"url": "postgresql://postgres@127.0.0.1:5432/postgres"}})
    _problem(snapshot, 429)
    assert _kept(settings) <= kept  # (the worker may collect old folders)
    assert [d["name"] for d in client.get("/v1/datasets", headers=auth).get_json()["items"]] \
        == ["One"]
    assert client.delete(f"/v1/datasets/{dataset_id}", headers=auth).status_code == 204
    assert _usage(client, auth)["datasets"] == 0
    again = upload(client, auth, "Two", ("two.csv", SMALL))
    assert again.status_code == 202, again.get_data(as_text=True)
    wait_imported(client, auth, again.get_json()["dataset_id"])


def test_an_upload_past_the_stored_bytes_is_413_and_keeps_no_file(settings, auth):
    client = _client(settings, tenant_max_bytes=1000)
    kept = _kept(settings)
    big = "a,b\n" + "12345,67890\n" * 100  # 1,204 bytes
    body = _problem(upload(client, auth, "Big", ("big.csv", big)), 413)
    assert "0 bytes" in body["detail"] and f"{len(big)} more" in body["detail"]
    assert "limit is 1000 bytes" in body["detail"]
    assert body["usage"] == {"datasets": 0, "bytes": 0, "max_datasets": 100,
                             "max_bytes": 1000}
    # Two small files that pass alone do not pass together.
    _problem(upload(client, auth, "Pair", ("a.csv", big[:600]), ("b.csv", big[:600])), 413)
    assert _kept(settings) <= kept  # (the worker may collect old folders)
    assert client.get("/v1/datasets", headers=auth).get_json()["items"] == []
    fits = upload(client, auth, "Small", ("small.csv", SMALL))
    assert fits.status_code == 202, fits.get_data(as_text=True)
    wait_imported(client, auth, fits.get_json()["dataset_id"])


def test_usage_counts_the_sources_and_versions_and_a_refresh_past_it_is_refused(
        settings, auth):
    client = _client(settings)
    made = upload(client, auth, "Sales", ("sales.csv", SMALL))
    dataset_id = made.get_json()["dataset_id"]
    assert wait_imported(client, auth, dataset_id)["status"] == "ready"
    folder = Path(settings.data_dir) / dataset_id
    stored = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    usage = _usage(client, auth)
    assert usage["datasets"] == 1 and usage["bytes"] == stored > len(SMALL)
    full = _client(settings, tenant_max_bytes=stored)
    body = _problem(full.post(f"/v1/datasets/{dataset_id}/refresh", headers=auth), 413)
    assert f"store {stored} bytes" in body["detail"]
    assert client.get(f"/v1/datasets/{dataset_id}", headers=auth).get_json()["version"] == 1
    _problem(upload(full, auth, "More", ("more.csv", SMALL)), 413)
    # A deleted dataset's files count for nothing, even before they are collected.
    assert client.delete(f"/v1/datasets/{dataset_id}", headers=auth).status_code == 204
    assert _usage(full, auth)["bytes"] == 0
    more = upload(full, auth, "More", ("more.csv", SMALL))
    assert more.status_code == 202, more.get_data(as_text=True)
    wait_imported(client, auth, more.get_json()["dataset_id"])


def test_the_openapi_document_describes_the_usage(client):
    spec = client.get("/openapi.json").get_json()
    listed = spec["components"]["schemas"]["DatasetList"]
    assert "usage" in listed["required"]
    usage = spec["components"]["schemas"]["DatasetUsage"]
    assert set(usage["properties"]) == {"datasets", "bytes", "max_datasets", "max_bytes"}
