"""Live-database snapshots through the API, refreshed while a job pinned to the old version
waits; bad database sources; the tenant's default dataset; PATCH annotations.

Real PostgreSQL and MariaDB (the scratch servers of test_live_snapshots), real Redis and
MariaDB behind the API, a real Celery worker consuming the datasets and chat queues,
and the offline model over HTTP.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from engine.datasets import version_path
from shared.db import session_scope
from shared.models import Dataset
from tests.datasets.conftest import PASSWORD
from tests.utils.datasets import upload, wait_imported
from tests.utils.held_jobs import HeldJobs
from tests.utils.waiting import wait_for_status
from worker.datasets.versions import retire_versions

pytestmark = pytest.mark.usefixtures("celery_worker", "fake_llm")


@pytest.fixture
def held(settings, tenant_key, celery_app):
    with HeldJobs(settings, tenant_key, celery_app) as jobs:
        yield jobs


def snapshot(client, auth, url: str, tables: list[str] | None = None) -> dict:
    resp = client.post("/v1/datasets", headers=auth, json={
        "name": "Live", "source": {"url": url, **({"tables": tables} if tables else {})}})
    assert resp.status_code == 202, resp.get_data(as_text=True)
    assert PASSWORD not in resp.get_data(as_text=True)
    return resp.get_json()


@pytest.mark.slow  # two live snapshots and a job
def test_a_snapshot_refreshes_to_v2_while_a_job_pinned_to_v1_still_answers_from_v1(
        server, client, auth, settings, held):
    server.run("DELETE FROM measures WHERE id > 3")
    accepted = snapshot(client, auth, server.url, ["measures", "regions"])
    dataset_id = accepted["dataset_id"]
    v1 = wait_imported(client, auth, dataset_id)
    assert v1["status"] == "ready" and v1["version"] == 1, v1
    assert {t["name"]: t["rows"] for t in v1["tables"]} == {"measures": 3, "regions": 2}
    assert PASSWORD not in str(v1) and "***" in v1["sources"][0]["url"]
    with session_scope(settings.database_url) as s:  # at rest, sealed: no password
        stored = s.get(Dataset, dataset_id).source_url
    assert stored.startswith("fernet:") and PASSWORD not in stored

    job = held.hold("How many measures are there?", dataset_id=dataset_id)
    assert (job["dataset_id"], job["dataset_version"]) == (dataset_id, 1)

    server.run("INSERT INTO measures (id, region) VALUES (4, 'east')")
    refresh = client.post(f"/v1/datasets/{dataset_id}/refresh", headers=auth)
    assert refresh.status_code == 202 and refresh.get_json()["version"] == 2
    v2 = wait_imported(client, auth, dataset_id)
    assert v2["status"] == "ready" and v2["version"] == 2, v2
    assert {t["name"]: t["rows"] for t in v2["tables"]}["measures"] == 4
    # Version 1 is pinned by the waiting job: it stays, whatever sweeps run.
    retire_versions(settings, _sessions(settings))
    assert version_path(settings.data_dir, dataset_id, 1).exists()

    held.release(job["job_id"])
    done = wait_for_status(client, auth, job["job_id"], timeout=60)
    assert done["status"] == "succeeded", done
    assert (done["dataset_id"], done["dataset_version"]) == (dataset_id, 1)
    assert "3" in done["result"]["answer_text"] and "4" not in done["result"]["answer_text"]

    later = client.post("/v1/jobs", headers=auth, json={"message": "How many measures are there?",
                                                        "dataset_id": dataset_id}).get_json()
    later = wait_for_status(client, auth, later["job_id"], timeout=60)
    assert later["dataset_version"] == 2 and "4" in later["result"]["answer_text"], later

    retire_versions(settings, _sessions(settings))
    assert not version_path(settings.data_dir, dataset_id, 1).exists()
    assert version_path(settings.data_dir, dataset_id, 2).exists()


def _sessions(settings):
    from shared.db import session_factory

    return session_factory(settings.database_url)


@pytest.mark.parametrize(("make_url", "tables", "code", "words"), [
    (lambda s: s.url.replace(":5432/", ":1/").replace(":3306/", ":1/"), None,
     "source_unreachable", ["could not connect", "127.0.0.1:1"]),
    (lambda s: s.url, ["measures", "no_such_table"], "missing_tables", ["no_such_table"]),
])
def test_a_bad_database_source_fails_clearly_without_its_credentials(
        server, client, auth, settings, make_url, tables, code, words):
    dataset_id = snapshot(client, auth, make_url(server), tables)["dataset_id"]
    view = wait_imported(client, auth, dataset_id, timeout=90)
    assert view["status"] == "failed" and view["version"] is None, view
    assert view["error"]["code"] == code, view["error"]
    text = str(view)
    assert PASSWORD not in text and "s3cret" not in text
    for word in words:
        assert word in view["error"]["detail"].lower(), view["error"]
    assert not list((Path(settings.data_dir) / dataset_id).glob("*.duckdb"))


def test_a_database_url_of_another_kind_is_refused_at_once(client, auth):
    resp = client.post("/v1/datasets", headers=auth, json={
        "name": "Nope", "source": {"url": "sqlite:///etc/passwd"}})
    assert resp.status_code == 422 and "url" in resp.get_json()["detail"]


def test_the_default_dataset_answers_jobs_that_name_none_and_patch_checks_names_and_sql(
        client, auth):
    dataset_id = upload(client, auth, "Fleet", ("planes.csv", "tailnum,seats\nN1,100\nN2,NA\n"
                                                 "N3,50\n")).get_json()["dataset_id"]
    assert wait_imported(client, auth, dataset_id)["status"] == "ready"

    unknown = client.patch(f"/v1/datasets/{dataset_id}", headers=auth, json={
        "tables": {"planes": {"columns": {"wings": "How many"}}, "boats": {}}})
    assert unknown.status_code == 422
    assert "'boats'" in unknown.get_json()["detail"] and "'wings'" in unknown.get_json()["detail"]
    bad_sql = client.patch(f"/v1/datasets/{dataset_id}", headers=auth, json={
        "examples": [{"question": "Seats?", "sql": "SELECT sum(seat) FROM planes"}]})
    assert bad_sql.status_code == 422 and "seat" in bad_sql.get_json()["detail"]
    assert client.get(f"/v1/datasets/{dataset_id}", headers=auth).get_json()["examples"] == []

    patched = client.patch(f"/v1/datasets/{dataset_id}", headers=auth, json={
        "description": "Our planes", "default": True,
        "tables": {"planes": {"description": "One row per plane",
                              "columns": {"seats": "Seats fitted"}}},
        "examples": [{"question": "Seats?", "sql": "SELECT sum(seats) FROM planes"}]})
    assert patched.status_code == 200, patched.get_data(as_text=True)
    view = patched.get_json()
    assert view["default"] is True and view["description"] == "Our planes"
    (table,) = view["tables"]
    assert table["description"] == "One row per plane"
    assert {c["name"]: c["description"] for c in table["columns"]} == {
        "tailnum": None, "seats": "Seats fitted"}

    job = client.post("/v1/jobs", headers=auth, json={"message": "How many planes are there?"})
    done = wait_for_status(client, auth, job.get_json()["job_id"], timeout=60)
    assert done["status"] == "succeeded", done
    assert (done["dataset_id"], done["dataset_version"]) == (dataset_id, 1)
    assert "3" in done["result"]["answer_text"]

    assert client.delete(f"/v1/datasets/{dataset_id}", headers=auth).status_code == 204
    assert client.get(f"/v1/datasets/{dataset_id}", headers=auth).status_code == 404
    builtin = client.post("/v1/jobs", headers=auth, json={"message": "How many flights?"})
    done = wait_for_status(client, auth, builtin.get_json()["job_id"], timeout=60)
    assert done["dataset_id"] is None and done["status"] == "succeeded"
