"""Correcting a dataset from the console's Data panel, in real headless Chromium against
the real API, worker and import engine (issue 33 §2): the import's warnings are shown; a
text column the import says reads as dates or numbers offers its re-type, and one click
either shows why it was refused (the row and value) or imports the next version with the
column re-typed; a failed dataset is listed with its error and deleted in one click;
datasets of one name are told apart in the picker."""
from __future__ import annotations

import csv

import pytest

from sunrise.client import SunriseClient
from tests.browser.console_page import ConsolePage
from tests.utils.dataset_files import RAGGED_CSV, SALES_CSV, write_file

pytestmark = pytest.mark.browser

def due_csv(folder):
    """Python's csv, as a small export: dates that read day first and month first
    alike, and amounts with decimal commas and one stray word."""
    path = folder / "due.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([
            ["id", "due", "amount"], [1, "01/02/2024", "1.234,50"], [2, "03/04/2024", "2.000,00"],
            [3, "05/06/2024", "bald"], [4, "07/08/2024", "17,25"]])
    return path


def imported(client: SunriseClient, name: str, path) -> str:
    dataset_id = client.create_dataset(name, [path])["dataset_id"]
    list(client.dataset_events(dataset_id))
    return dataset_id


def test_a_text_column_is_retyped_in_one_click_or_told_why_not(page, live_api, console_key,
                                                               tmp_path):
    with SunriseClient(live_api.base_url, console_key) as client:
        dataset_id = imported(client, "due", due_csv(tmp_path))
        view = client.dataset(dataset_id)
    assert view["version"] == 1
    offers = {c["name"]: c["suggestion"] for c in view["tables"][0]["columns"]}
    assert offers["due"] == {"type": "DATE", "format": "%d/%m/%Y",
                             "label": "looks like a date (%d/%m/%Y) — treat as date?"}
    assert offers["amount"]["format"] == "decimal_comma" and offers["id"] is None
    console = ConsolePage(page, live_api.base_url).open(console_key)
    page.locator(f"#dataset-picker option[value='{dataset_id}']").wait_for(state="attached")
    page.select_option("#dataset-picker", dataset_id)
    page.locator("#dataset-info", has_text="version 1").wait_for()
    warnings = page.locator("[data-testid=dataset-warning]")
    warnings.first.wait_for()
    assert any("due" in w and "day first" in w for w in warnings.all_inner_texts()), warnings.all_inner_texts()
    page.locator(".schema-browser > summary").click()
    page.locator("[data-testid=schema-table][data-table=due] summary").click()
    assert console.schema_columns("due")["due"]["type"] == "VARCHAR"

    amount = page.locator("[data-testid=schema-column][data-column=amount]")
    amount.locator("[data-testid=column-fix]").click()
    refused = page.locator("[data-testid=fix-state].bad")
    refused.wait_for()
    assert "amount was not re-typed" in refused.inner_text()
    assert "row 3 has 'bald'" in refused.inner_text(), refused.inner_text()

    due = page.locator("[data-testid=schema-column][data-column=due]")
    fix = due.locator("[data-testid=column-fix]")
    assert "treat as" in fix.inner_text(), fix.inner_text()
    fix.click()
    page.locator("[data-testid=fix-state]", has_text="is DATE from version 2").wait_for()
    page.locator("#dataset-info", has_text="version 2").wait_for()
    page.locator("[data-testid=schema-table][data-table=due] summary").click()
    columns = console.schema_columns("due")
    assert columns["due"]["type"] == "DATE"
    assert page.locator("[data-testid=schema-column][data-column=due] "
                        "[data-testid=column-fix]").count() == 0
    with SunriseClient(live_api.base_url, console_key) as client:
        view = client.dataset(dataset_id)
    assert view["version"] == 2
    assert view["corrections"]["due"]["columns"] == {"due": {"type": "DATE",
                                                             "format": "%d/%m/%Y"}}
    assert page.console_errors == []


def test_a_failed_dataset_is_deleted_and_namesakes_are_told_apart(page, live_api, console_key,
                                                                  tmp_path):
    sales = write_file(tmp_path, "sales.csv", SALES_CSV)
    ragged = write_file(tmp_path, "ragged.csv", RAGGED_CSV)
    with SunriseClient(live_api.base_url, console_key) as client:
        first = imported(client, "sales", sales)
        second = imported(client, "sales", sales)
        client.refresh_dataset(second)
        list(client.dataset_events(second))
        failed = imported(client, "ragged", ragged)
        assert client.dataset(failed)["status"] == "failed"
    console = ConsolePage(page, live_api.base_url).open(console_key)
    item = page.locator(f"[data-testid=failed-dataset][data-dataset='{failed}']")
    item.wait_for()
    assert "line 4" in item.inner_text() and "ragged" in item.inner_text()

    labels = {o["value"]: o["label"] for o in console.picker_options()}
    assert labels[first].startswith("sales — v1, ") and labels[first].endswith("sales.csv")
    assert labels[second].startswith("sales — v2, ")
    assert labels[first] != labels[second]

    item.locator("[data-testid=delete-dataset]").click()
    item.wait_for(state="detached")
    assert page.locator(f"#dataset-picker option[value='{failed}']").count() == 0
    with SunriseClient(live_api.base_url, console_key) as client:
        assert {d["dataset_id"] for d in client.datasets()} == {first, second}
    assert page.console_errors == []
