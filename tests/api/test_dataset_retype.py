"""Correcting how a dataset was read, over HTTP (issue 33 §2): a re-type is checked on every
value first (422 naming the row and value, nothing kept), then imports the next version
with the column re-typed while the current one serves; a refresh keeps the re-type; a
part with only re-types leaves the table's descriptions; names and layouts are checked."""
from __future__ import annotations

import csv
import io
import sqlite3

import pandas as pd
import pytest

from shared.db import session_scope
from shared.models import Dataset
from tests.utils.datasets import upload, wait_imported

pytestmark = pytest.mark.usefixtures("celery_worker")


def german_export() -> bytes:
    """A German shop's export as pandas writes it: ';' between fields, decimal commas,
    order days as yyyymmdd numbers, delivery dates day.month.year with one 'bald'."""
    frame = pd.DataFrame({
        "kunde": ["Müller", "Schmidt", "Weber", "Fischer"],
        "umsatz": [8102.58, 12.5, 1056.13, 3.0],
        "bestellt": [20240131, 20240215, 20240301, 20240302],
        "geliefert": ["31.01.2024", "15.02.2024", "bald", "02.03.2024"],
    })
    return frame.to_csv(sep=";", decimal=",", index=False).encode()


def columns_of(view: dict) -> dict[str, dict]:
    (table,) = view["tables"]
    return {c["name"]: c for c in table["columns"]}


def test_a_retype_is_checked_on_every_value_then_makes_a_version_a_refresh_keeps(
        client, auth, settings):
    dataset_id = upload(client, auth, "Umsatz", ("umsatz.csv", german_export())).get_json()[
        "dataset_id"]
    first = wait_imported(client, auth, dataset_id)
    assert first["version"] == 1
    # The import offers the re-type its warning names, for the console's one click.
    assert columns_of(first)["geliefert"]["suggestion"] == {
        "type": "DATE", "format": "%d.%m.%Y",
        "label": "looks like a date (%d.%m.%Y) — treat as date?"}
    assert columns_of(first)["kunde"]["suggestion"] is None
    path = f"/v1/datasets/{dataset_id}"
    described = client.patch(path, headers=auth, json={"tables": {"umsatz": {
        "description": "Umsatz je Kunde", "columns": {"kunde": "Wer kaufte"}}}})
    assert described.status_code == 200, described.get_data(as_text=True)

    refused = client.patch(path, headers=auth, json={"tables": {"umsatz": {"columns": {
        "geliefert": {"type": "DATE", "format": "%d.%m.%Y"}}}}})
    assert refused.status_code == 422, refused.get_data(as_text=True)
    problem = refused.get_json()
    assert "umsatz.geliefert: row 3 has 'bald'" in problem["detail"], problem
    assert problem["failures"] == [{"table": "umsatz", "column": "geliefert", "type": "DATE",
                                    "format": "%d.%m.%Y", "row": 3, "value": "bald",
                                    "count": 1}]
    view = client.get(path, headers=auth).get_json()
    assert (view["status"], view["version"], view["corrections"]) == ("ready", 1, {})

    accepted = client.patch(path, headers=auth, json={"tables": {"umsatz": {"columns": {
        "umsatz": {"type": "DECIMAL(12,2)", "format": "decimal_comma"},
        "bestellt": {"type": "date", "format": "%Y%m%d"}}}}})
    assert accepted.status_code == 202, accepted.get_data(as_text=True)
    assert accepted.headers["Location"] == path
    assert accepted.get_json()["status"] == "importing"
    assert accepted.get_json()["version"] == 1  # serving until the next one is ready

    view = wait_imported(client, auth, dataset_id)
    assert (view["status"], view["version"]) == ("ready", 2), view["error"]
    columns = columns_of(view)
    assert columns["umsatz"]["type"] == "DECIMAL(12,2)" and columns["umsatz"]["max"] == 8102.58
    assert columns["bestellt"]["type"] == "DATE"
    assert (columns["bestellt"]["min"], columns["bestellt"]["format"]) == ("2024-01-31",
                                                                           "%Y%m%d")
    assert columns["kunde"]["description"] == "Wer kaufte"
    assert view["tables"][0]["description"] == "Umsatz je Kunde"
    assert view["corrections"] == {"umsatz": {"header_row": None, "skip_footer": None,
                                              "columns": {
        "umsatz": {"type": "DECIMAL(12,2)", "format": "decimal_comma"},
        "bestellt": {"type": "DATE", "format": "%Y%m%d"}}}}

    refreshed = client.post(f"{path}/refresh", headers=auth)
    assert refreshed.status_code == 202
    view = wait_imported(client, auth, dataset_id)
    assert view["version"] == 3 and columns_of(view)["umsatz"]["type"] == "DECIMAL(12,2)"
    assert columns_of(view)["bestellt"]["type"] == "DATE"

    # Dropping a re-type is a new version with the import's own type again.
    dropped = client.patch(path, headers=auth, json={"tables": {"umsatz": {"columns": {
        "bestellt": {"type": None}}}}})
    assert dropped.status_code == 202, dropped.get_data(as_text=True)
    view = wait_imported(client, auth, dataset_id)
    assert view["version"] == 4 and columns_of(view)["bestellt"]["type"] == "BIGINT"
    assert list(view["corrections"]["umsatz"]["columns"]) == ["umsatz"]
    with session_scope(settings.database_url) as s:
        stored = s.get(Dataset, dataset_id).annotations
    assert stored["corrections"]["umsatz"]["columns"] == {
        "umsatz": {"type": "DECIMAL(12,2)", "format": "decimal_comma"}}


@pytest.mark.parametrize(("body", "words"), [
    ({"umsatz": {"columns": {"rabatt": {"type": "DOUBLE"}}}}, ["no column umsatz.'rabatt'"]),
    ({"boote": {"columns": {"x": {"type": "DOUBLE"}}}}, ["no table 'boote'"]),
    ({"umsatz": {"columns": {"umsatz": {"type": "MONEY"}}}}, ["MONEY", "DECIMAL(p,s)"]),
    ({"umsatz": {"columns": {"umsatz": {"type": "DOUBLE", "format": "%d.%m.%Y"}}}},
     ["umsatz.umsatz: format '%d.%m.%Y' is not one for numbers", "decimal_comma"]),
    ({"umsatz": {"header_row": 0}}, ["header_row"]),
])
def test_bad_corrections_are_a_422_and_keep_nothing(client, auth, body, words):
    dataset_id = upload(client, auth, "Umsatz", ("umsatz.csv", german_export())).get_json()[
        "dataset_id"]
    assert wait_imported(client, auth, dataset_id)["version"] == 1
    resp = client.patch(f"/v1/datasets/{dataset_id}", headers=auth, json={"tables": body})
    assert resp.status_code == 422, resp.get_data(as_text=True)
    for word in words:
        assert word in resp.get_json()["detail"], resp.get_json()
    view = client.get(f"/v1/datasets/{dataset_id}", headers=auth).get_json()
    assert (view["status"], view["version"], view["corrections"]) == ("ready", 1, {})


def report_with_title_rows() -> bytes:
    """A CSV as a report tool writes it (Python's csv): two title rows above the header,
    a totals row below the data."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerows([["Quarterly report", "", ""], ["Generated 2024-04-01", "", ""],
                      ["region", "units", "revenue"], ["north", 10, 100.5],
                      ["south", 3, 20.25], ["east", 7, 70], ["Total", 20, 190.75]])
    return out.getvalue().encode()


def sqlite_shop(tmp_path) -> bytes:
    path = tmp_path / "shop.sqlite"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE orders (id INTEGER, amount REAL)")
        con.execute("INSERT INTO orders VALUES (1, 9.5), (2, 3.0)")
    con.close()
    return path.read_bytes()


def test_a_layout_reimports_the_file_as_a_new_version_and_a_database_table_has_none(
        client, auth, tmp_path):
    dataset_id = upload(client, auth, "Report", ("report.csv", report_with_title_rows()),
                        ("shop.sqlite", sqlite_shop(tmp_path))).get_json()["dataset_id"]
    view = wait_imported(client, auth, dataset_id)
    assert view["version"] == 1, view["error"]
    path = f"/v1/datasets/{dataset_id}"

    refused = client.patch(path, headers=auth, json={"tables": {"orders": {"header_row": 2}}})
    assert refused.status_code == 422, refused.get_data(as_text=True)
    assert "'orders' comes from a database" in refused.get_json()["detail"]

    accepted = client.patch(path, headers=auth, json={"tables": {"report": {
        "header_row": 3, "skip_footer": 1}}})
    assert accepted.status_code == 202, accepted.get_data(as_text=True)
    view = wait_imported(client, auth, dataset_id)
    assert view["version"] == 2, view["error"]
    report = next(t for t in view["tables"] if t["name"] == "report")
    assert report["rows"] == 3
    types = {c["name"]: c["type"] for c in report["columns"]}
    assert types == {"region": "VARCHAR", "units": "BIGINT", "revenue": "DOUBLE"}
    assert view["corrections"]["report"] == {"header_row": 3, "skip_footer": 1, "columns": {}}

    # Dropping the layout imports the file as the import reads it by itself again.
    dropped = client.patch(path, headers=auth, json={"tables": {"report": {
        "header_row": None, "skip_footer": None}}})
    assert dropped.status_code == 202, dropped.get_data(as_text=True)
    view = wait_imported(client, auth, dataset_id)
    assert view["version"] == 3 and view["corrections"] == {}
