"""The console's Data panel in real headless Chromium against the real API, worker and
offline model: upload a CSV with a progress bar, browse its schema, ask a suggested
question about it and get a chart bound to its rows; the default dataset is marked and
chosen; another tenant sees none of it."""
from __future__ import annotations

import uuid

import pytest

from sunrise.client import ApiError, SunriseClient
from tests.browser.conftest import UI_TIMEOUT_MS, save_screenshot
from tests.browser.console_page import CHART_MARKS, ConsolePage
from tests.utils.dataset_files import RAGGED_CSV, SALES_CSV, write_file

pytestmark = pytest.mark.browser

AVERAGE_UNITS = "What is the average units per city?"


@pytest.fixture
def sales_csv(tmp_path):
    return write_file(tmp_path, "sales.csv", SALES_CSV)


def _other_key(base_settings) -> str:
    from shared.db import session_scope
    from shared.keys import create_key

    with session_scope(base_settings.database_url) as s:
        return create_key(s, f"browser-other-{uuid.uuid4().hex[:8]}")


def test_upload_browse_and_ask_about_a_csv_with_na_nulls(page, live_api, console_key,
                                                         fake_llm, sales_csv):
    console = ConsolePage(page, live_api.base_url).open(console_key)
    status = console.upload_dataset("sales", sales_csv)
    assert status.startswith("Ready: sales, 1 table, 5 rows"), status
    bar = page.locator("[data-testid=upload-progress]")
    assert bar.get_attribute("data-uploaded") == "100", "upload progress reached the end"
    assert bar.evaluate("b => b.value") == 1

    # The new dataset is the one questions now go to.
    with SunriseClient(live_api.base_url, console_key) as client:
        (dataset,) = client.datasets()
    chosen = [o for o in console.picker_options() if o["selected"]]
    assert [o["value"] for o in chosen] == [dataset["dataset_id"]]

    # Schema browser: NA cells are nulls, so the numeric columns are numeric.
    columns = console.schema_columns("sales")
    assert columns["units"]["type"] == "BIGINT" and columns["price"]["type"] == "DOUBLE"
    assert columns["sold_on"]["type"] == "DATE"
    assert "40.0% null" in columns["units"]["profile"]
    assert "Oslo" in columns["city"]["profile"] and "Bergen" in columns["city"]["profile"]

    suggestions = console.suggestions()
    assert AVERAGE_UNITS in suggestions, suggestions
    page.locator("#suggestions [data-testid=suggestion]", has_text=AVERAGE_UNITS).click()
    answer = console.wait_for_answer()
    assert answer.locator(CHART_MARKS).count() >= 2
    answer.locator("[data-testid=toggle-data]").first.click()
    cells = answer.locator("[data-testid=chart-data] tbody tr").all_inner_texts()
    by_city = {row.split("\t")[0]: row.split("\t")[1] for row in cells}
    assert by_city["Oslo"] == "9.5" and by_city["Tromso"] == "3", by_city

    with SunriseClient(live_api.base_url, console_key) as client:
        (conversation,) = client.conversations()["items"]
        messages = client.conversation(conversation["conversation_id"])["messages"]
        job = client.get(messages[-1]["job_id"])
    assert (job["dataset_id"], job["dataset_version"]) == (dataset["dataset_id"], 1)
    page.locator(".schema-browser > summary").click()
    page.locator("[data-testid=schema-table][data-table=sales] summary").click()
    save_screenshot(page, "dataset-uploaded-and-asked")
    assert page.console_errors == []


def test_the_default_dataset_is_marked_and_chosen(page, live_api, console_key, sales_csv):
    with SunriseClient(live_api.base_url, console_key) as client:
        first = client.create_dataset("first", [sales_csv])["dataset_id"]
        second = client.create_dataset("second", [sales_csv])["dataset_id"]
        for dataset_id in (first, second):
            assert list(client.dataset_events(dataset_id))[-1].event == "ready"
        client.annotate_dataset(first, {"default": True})
    console = ConsolePage(page, live_api.base_url).open(console_key)
    page.locator("#dataset-picker option[data-default=true]").wait_for(state="attached")
    options = {o["value"]: o for o in console.picker_options()}
    # With a default, a job that names no dataset asks the default: no built-in choice.
    assert set(options) == {first, second}
    assert options[first]["default"] and options[first]["selected"]
    assert options[first]["label"] == "first (default)"
    assert not options[second]["default"]


def test_a_failed_upload_says_which_line_and_another_tenant_sees_nothing(
        page, browser, live_api, console_key, base_settings, sales_csv, tmp_path):
    ragged = write_file(tmp_path, "ragged.csv", RAGGED_CSV)
    console = ConsolePage(page, live_api.base_url).open(console_key)
    status = console.upload_dataset("ragged", ragged)
    assert status.startswith("Import failed:") and "line 4" in status, status

    assert console.upload_dataset("sales", sales_csv).startswith("Ready")
    with SunriseClient(live_api.base_url, console_key) as client:
        mine = [d["dataset_id"] for d in client.datasets() if d["status"] == "ready"]
    other_key = _other_key(base_settings)
    context = browser.new_context(viewport={"width": 1360, "height": 900}, locale="en-US")
    try:
        context.set_default_timeout(UI_TIMEOUT_MS)
        stranger_page = context.new_page()
        stranger = ConsolePage(stranger_page, live_api.base_url).open(other_key)
        stranger_page.locator("#dataset-info", has_text="built-in").wait_for()
        assert [o["value"] for o in stranger.picker_options()] == [""]
    finally:
        context.close()
    with SunriseClient(live_api.base_url, other_key) as outsider, \
            pytest.raises(ApiError) as refused:
        outsider.dataset(mine[0])
    assert refused.value.status == 404
