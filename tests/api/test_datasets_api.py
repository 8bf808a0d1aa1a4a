"""/v1/datasets as a new user meets it: upload a CSV through HTTP, watch it import on a real
worker (datasets queue), see it ready with its numeric columns numeric, ask about it
through the offline model and get a chart bound to its rows; another tenant sees none
of it; bad uploads are refused clearly and leave nothing behind."""
from __future__ import annotations

import hashlib
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from shared.db import session_scope
from shared.models import Dataset
from sunrise.client import SunriseClient
from tests.utils.datasets import other_tenant, sse_events, upload, wait_imported
from tests.utils.waiting import wait_for_status

SALES = ("region,units,revenue,day\n"
         "north,10,100.5,2024-01-01\n"
         "south,NA,20.25,2024-01-02\n"
         "north,3,NA,NA\n"
         "east,7,70,2024-01-04\n"
         "south,1,,2024-01-05\n")
NUMERIC = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "DOUBLE", "FLOAT"}

pytestmark = pytest.mark.usefixtures("celery_worker")


def uploads_left(settings) -> list[str]:
    folder = Path(settings.data_dir) / "uploads"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_a_csv_with_na_nulls_uploads_imports_and_answers_a_question_with_a_chart(
        client, auth, fake_llm):
    accepted = upload(client, auth, "Sales", ("sales.csv", SALES))
    assert accepted.status_code == 202, accepted.get_data(as_text=True)
    body = accepted.get_json()
    assert body["status"] == "importing" and body["version"] == 1
    assert accepted.headers["Location"] == body["links"]["self"] == \
        f"/v1/datasets/{body['dataset_id']}"

    view = wait_imported(client, auth, body["dataset_id"])
    assert view["status"] == "ready" and view["version"] == 1 and view["error"] is None
    assert view["sources"] == [{"file": "sales.csv"}]
    (table,) = view["tables"]
    assert table["name"] == "sales" and table["rows"] == 5
    types = {c["name"]: c["type"] for c in table["columns"]}
    assert types["units"] in NUMERIC and types["revenue"] in NUMERIC, types
    assert types["day"] == "DATE"
    units = next(c for c in table["columns"] if c["name"] == "units")
    assert units["null_fraction"] == pytest.approx(0.2) and units["max"] == 10

    events = sse_events(client, auth, body["links"]["events"])
    assert events[-1][0] == "ready" and events[-1][1]["version"] == 1
    progress = [data for name, data in events if name == "progress"]
    assert progress and progress[-1] == {"version": 1, "table": "sales", "rows": 5, "done": True,
                                         "percent": 100.0, "total_rows": 5}
    assert client.get(f"/v1/datasets/{body['dataset_id']}/events", headers={
        **auth, "Last-Event-ID": "99999999999999-0"}).status_code == 204

    listed = client.get("/v1/datasets", headers=auth).get_json()["items"]
    assert [d["dataset_id"] for d in listed] == [body["dataset_id"]]
    # A list page carries each table's name, rows and description, not its column
    # profiles (thousands of columns with their top values); the dataset itself has them.
    assert listed[0]["tables"] == [{"name": "sales", "rows": 5, "description": None,
                                   "warnings": []}]

    job = client.post("/v1/jobs", headers=auth, json={
        "message": "What is the total revenue by region?",
        "dataset_id": body["dataset_id"]}).get_json()
    done = wait_for_status(client, auth, job["job_id"], timeout=60)
    assert done["status"] == "succeeded", done
    assert done["dataset_id"] == body["dataset_id"] and done["dataset_version"] == 1
    (chart,) = done["result"]["charts"]
    rows = {tuple(r.values()) for r in chart["data"]} if isinstance(chart["data"][0], dict) \
        else {tuple(r) for r in chart["data"]}
    assert rows == {("north", 100.5), ("south", 20.25), ("east", 70.0)}, chart["data"]


def test_another_tenant_gets_404_for_the_dataset_everywhere(client, auth, settings):
    dataset_id = upload(client, auth, "Mine", ("mine.csv", "a,b\n1,2\n")).get_json()["dataset_id"]
    assert wait_imported(client, auth, dataset_id)["status"] == "ready"
    intruder = other_tenant(settings)
    for method, path, kwargs in [
            ("get", f"/v1/datasets/{dataset_id}", {}),
            ("patch", f"/v1/datasets/{dataset_id}", {"json": {"description": "x"}}),
            ("delete", f"/v1/datasets/{dataset_id}", {}),
            ("post", f"/v1/datasets/{dataset_id}/refresh", {}),
            ("get", f"/v1/datasets/{dataset_id}/events", {}),
            ("post", "/v1/jobs", {"json": {"message": "How many rows?",
                                           "dataset_id": dataset_id}}),
            ("post", "/v1/batches", {"json": {"questions": ["How many rows?"],
                                              "dataset_id": dataset_id}})]:
        resp = getattr(client, method)(path, headers=intruder, **kwargs)
        assert resp.status_code == 404, (method, path, resp.get_data(as_text=True))
        assert resp.mimetype == "application/problem+json"
        assert dataset_id in resp.get_json()["detail"]
    assert client.get("/v1/datasets", headers=intruder).get_json()["items"] == []
    assert client.get(f"/v1/datasets/{dataset_id}", headers=auth).status_code == 200


@pytest.mark.parametrize(("files", "status", "words"), [
    ([("empty.csv", b"")], 422, ["empty.csv", "empty"]),
    ([("notes.docx", b"PK\x03\x04 not a table")], 415, ["notes.docx", "supported", ".csv"]),
    ([], 422, ["file"]),
])
def test_bad_uploads_are_refused_and_keep_nothing(client, auth, settings, files, status, words):
    before = client.get("/v1/datasets", headers=auth).get_json()["items"]
    resp = upload(client, auth, "Bad", *files)
    assert resp.status_code == status, resp.get_data(as_text=True)
    assert resp.mimetype == "application/problem+json"
    for word in words:
        assert word in resp.get_json()["detail"]
    assert client.get("/v1/datasets", headers=auth).get_json()["items"] == before
    assert uploads_left(settings) == []


def test_an_upload_over_the_limit_is_413_and_keeps_nothing(settings, auth):
    from api import create_app

    small = create_app(settings=settings.model_copy(update={"max_upload_mb": 1}))
    client = small.test_client()
    big = "a,b\n" + "12345,67890\n" * 200_000  # 2.4 MB
    resp = upload(client, auth, "Big", ("big.csv", big))
    assert resp.status_code == 413, resp.get_data(as_text=True)
    assert resp.mimetype == "application/problem+json"
    assert "1 MB" in resp.get_json()["detail"]
    assert client.get("/v1/datasets", headers=auth).get_json()["items"] == []
    assert uploads_left(settings) == []


def test_a_ragged_csv_fails_naming_the_line_and_no_version_is_made(client, auth, settings):
    ragged = "a,b,c\n1,2,3\n4,5,6\n7,8\n9,10,11\n"
    dataset_id = upload(client, auth, "Ragged", ("ragged.csv", ragged)).get_json()["dataset_id"]
    view = wait_imported(client, auth, dataset_id)
    assert view["status"] == "failed" and view["version"] is None and view["tables"] == []
    assert "ragged.csv" in view["error"]["detail"] and "line 4" in view["error"]["detail"]
    assert view["error"]["code"] == "malformed_source"
    events = sse_events(client, auth, f"/v1/datasets/{dataset_id}/events")
    assert events[-1][0] == "failed"
    assert not list((Path(settings.data_dir) / dataset_id).glob("*.duckdb"))
    job = client.post("/v1/jobs", headers=auth, json={"message": "How many rows?",
                                                       "dataset_id": dataset_id})
    assert job.status_code == 409 and "no ready version" in job.get_json()["detail"]


def test_form_parts_without_a_readable_name_are_a_400_naming_the_others(client, auth):
    # Found by schemathesis: werkzeug keys a part whose Content-Disposition has no
    # readable name (none at all, or a broken quote) under None, which broke the sorting
    # of the unknown names: a 500 instead of a 400.
    boundary = "b0undary"
    parts = ['form-data', 'form-data; name="a\\"', 'form-data; filename="x.csv"',
             'form-data; name="odd"', 'form-data; name="name"']
    body = "".join(f"--{boundary}\r\nContent-Disposition: {p}\r\n\r\nSales\r\n"
                   for p in parts) + f"--{boundary}--\r\n"
    before = client.get("/v1/datasets", headers=auth).get_json()["items"]
    resp = client.post("/v1/datasets", data=body.encode(), headers={
        **auth, "Content-Type": f"multipart/form-data; boundary={boundary}"})
    assert resp.status_code == 400, resp.get_data(as_text=True)
    assert resp.mimetype == "application/problem+json"
    detail = resp.get_json()["detail"]
    assert "Unknown form fields" in detail and "'odd'" in detail
    assert "a part without a readable name" in detail
    assert client.get("/v1/datasets", headers=auth).get_json()["items"] == before


def test_the_list_pages_newest_first_without_repeats_and_the_client_follows_every_page(
        app, client, auth, tenant_key):
    made = [upload(client, auth, f"Paged {i}", ("p.csv", "a\n1\n")).get_json()["dataset_id"]
            for i in range(3)]
    first = client.get("/v1/datasets?limit=2", headers=auth).get_json()
    assert len(first["items"]) == 2 and first["next_cursor"]
    second = client.get(f"/v1/datasets?limit=2&cursor={first['next_cursor']}",
                        headers=auth).get_json()
    assert len(second["items"]) == 1 and second["next_cursor"] is None
    paged = [d["dataset_id"] for d in first["items"] + second["items"]]
    assert paged == made[::-1]
    assert [d["dataset_id"] for d in
            client.get("/v1/datasets", headers=auth).get_json()["items"]] == paged

    sunrise = SunriseClient("http://api.test", tenant_key)
    sunrise.http = httpx.Client(transport=httpx.WSGITransport(app=app), base_url="http://api.test",
                                headers=auth)
    assert [d["dataset_id"] for d in sunrise.datasets(page_size=1)] == paged


@pytest.mark.parametrize(("query", "status", "word"), [
    ("cursor=bm90LW91cnM", 400, "cursor"), ("limit=0", 422, "limit"), ("limit=101", 422, "limit")])
def test_a_bad_page_request_is_refused_saying_why(client, auth, query, status, word):
    resp = client.get(f"/v1/datasets?{query}", headers=auth)
    assert resp.status_code == status and resp.mimetype == "application/problem+json"
    assert word in resp.get_json()["detail"]


def dataset_folders(settings) -> set[str]:
    return {p.name for p in Path(settings.data_dir).iterdir() if p.name != "uploads"}


def test_a_retried_upload_with_its_idempotency_key_makes_one_dataset(client, auth, settings):
    key = {**auth, "Idempotency-Key": "upload-1"}
    folders_before = dataset_folders(settings)
    first = upload(client, key, "Once", ("once.csv", "a,b\n1,2\n"))
    again = upload(client, key, "Once", ("once.csv", "a,b\n1,2\n"))
    assert first.status_code == again.status_code == 202
    assert again.get_json() == first.get_json()
    listed = client.get("/v1/datasets", headers=auth).get_json()["items"]
    assert [d["dataset_id"] for d in listed] == [first.get_json()["dataset_id"]]
    assert uploads_left(settings) == []

    # The contents were hashed as they were spooled: the digest is the file's own.
    with session_scope(settings.database_url) as s:
        stored = s.get(Dataset, first.get_json()["dataset_id"]).request_hash
    file_hash = hashlib.sha256(b"a,b\n1,2\n").digest()
    assert stored == hashlib.sha256(b"Once|once.csv|" + file_hash).hexdigest()

    other = upload(client, key, "Once", ("once.csv", "a,b\n1,3\n"))  # other contents
    assert other.status_code == 409 and other.mimetype == "application/problem+json"
    assert "Idempotency-Key" in other.get_json()["detail"]
    assert len(client.get("/v1/datasets", headers=auth).get_json()["items"]) == 1
    assert uploads_left(settings) == []
    assert dataset_folders(settings) - folders_before == {first.get_json()["dataset_id"]}


@pytest.mark.slow  # two large uploads racing
def test_two_uploads_racing_with_one_key_make_one_dataset_and_keep_one_copy(app, auth, settings):
    key = {**auth, "Idempotency-Key": "race-1"}
    folders_before = dataset_folders(settings)
    start = threading.Barrier(2)

    def post() -> dict:
        with app.test_client() as own:
            start.wait(10)
            resp = upload(own, key, "Race", ("race.csv", "a\n1\n" * 2000))
            assert resp.status_code == 202, resp.get_data(as_text=True)
            return resp.get_json()

    with ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(lambda _: post(), range(2)))
    assert answers[0] == answers[1]
    dataset_id = answers[0]["dataset_id"]
    assert dataset_folders(settings) - folders_before == {dataset_id}  # the loser's is gone
    assert wait_imported(app.test_client(), auth, dataset_id)["status"] == "ready"


def test_a_database_snapshot_retried_with_its_key_is_one_dataset(client, auth):
    key = {**auth, "Idempotency-Key": "snapshot-1"}
    body = {"name": "Shop", "source": {"url": "postgresql://reader@127.0.0.1:5432/none",
                                       "tables": ["public.orders"]}}
    first = client.post("/v1/datasets", headers=key, json=body)
    again = client.post("/v1/datasets", headers=key, json=body)
    assert first.status_code == again.status_code == 202 and again.get_json() == first.get_json()
    changed = client.post("/v1/datasets", headers=key, json={**body, "name": "Other"})
    assert changed.status_code == 409
    assert len(client.get("/v1/datasets", headers=auth).get_json()["items"]) == 1


def test_the_loser_of_a_race_on_one_key_answers_with_the_winner_and_keeps_nothing(
        app, settings, tenant_key):
    """The moment between the replay check and the commit, held open: the winner's row
    is committed first, so the loser's insert meets the unique index."""
    from api.services import datasets as service
    from shared.db import session_scope
    from shared.errors import Conflict
    from shared.keys import tenant_id_for_key
    from shared.models import Dataset, new_id

    res = app.extensions["sunrise"]
    winner, loser = new_id(), new_id()
    with session_scope(settings.database_url) as s:
        tenant_id = tenant_id_for_key(s, tenant_key)
        s.add(Dataset(id=winner, tenant_id=tenant_id, name="Winner", status="importing",
                      building_version=1, import_seq=1, sources=[], annotations={},
                      is_default=False, idempotency_key="race-2", request_hash="h" * 64))
    folder = Path(settings.data_dir) / loser / service.SOURCES_DIR
    folder.mkdir(parents=True)
    (folder / "0-race.csv").write_text("a\n1\n")

    answer = service._commit_new(res, tenant_id, loser, "Winner", [{"file": "race.csv"}], None,
                                 "race-2", "h" * 64)
    assert answer["dataset_id"] == winner
    assert not (Path(settings.data_dir) / loser).exists()
    with pytest.raises(Conflict, match="different request body"):
        service._commit_new(res, tenant_id, new_id(), "Other", [], None, "race-2",
                            "x" * 64)
