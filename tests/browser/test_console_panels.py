"""The console's sidebar panels against the real API: the tenant's usage, and batch
reports from pasted questions to the HTML report.
"""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import save_screenshot
from tests.browser.console_page import ConsolePage

pytestmark = pytest.mark.browser

QUESTION = "How many flights did each carrier fly?"


def _stat(page, testid: str) -> str:
    return page.locator(f"#usage [data-testid={testid}] .stat-value").inner_text()


def _stat_locator(page, testid: str, value: str):
    """The usage figure ``testid`` once it reads exactly ``value``."""
    return page.locator(f"#usage [data-testid={testid}] .stat-value",
                        has_text=re.compile(f"^{re.escape(value)}$"))


def test_usage_panel_shows_the_tenants_tokens_cost_and_cache_hits(page, live_api, console_key,
                                                                 fake_llm):
    console = ConsolePage(page, live_api.base_url).open(console_key)
    page.locator("#usage [data-testid=usage-jobs]").wait_for()
    assert _stat(page, "usage-jobs") == "0"

    console.ask(QUESTION)
    console.wait_for_answer()
    # The sidebar refreshes when the job ends; the figures are this tenant's alone.
    _stat_locator(page, "usage-jobs", "1").wait_for()
    assert _stat(page, "usage-llm-calls") == "2"
    assert int(_stat(page, "usage-output").replace(",", "")) > 0
    cost = float(_stat(page, "usage-cost").lstrip("$"))
    assert cost > 0
    # The offline model simulates prompt caching: the second call reads the cached prefix.
    assert int(_stat(page, "usage-cache-read").replace(",", "")) > 0
    assert re.fullmatch(r"\d+\.\d%", _stat(page, "usage-cache-hit"))
    assert page.locator("#usage tbody tr").count() == 1
    save_screenshot(page, "usage-panel")
    assert page.console_errors == []


def test_batch_from_a_loaded_file_runs_to_its_html_report(page, live_api, console_key, fake_llm,
                                                          tmp_path):
    questions = tmp_path / "carriers-and-months.txt"
    questions.write_text("# questions for the weekly report\n"
                         f"{QUESTION}\n\nWhat is the average departure delay per month?\n")
    ConsolePage(page, live_api.base_url).open(console_key)

    page.set_input_files("#batch-file", str(questions))
    # The browser reads the file asynchronously; wait until the form is filled.
    expect(page.locator("#batch-title")).to_have_value("carriers-and-months")
    assert page.locator("#batch-questions").input_value().splitlines() == [
        QUESTION, "What is the average departure delay per month?"]
    assert page.locator("#batch-title").input_value() == "carriers-and-months"
    page.click("#batch-submit")
    page.locator("#batch-status [data-testid=batch-state]", has_text="completed").wait_for()
    status = page.locator("#batch-status").inner_text()
    assert "2 of 2 done" in status and "succeeded 2" in status, status
    # Its questions became conversations, and its tokens count in the usage panel.
    page.locator("#conversations [data-testid=conversation-item]").nth(1).wait_for()
    _stat_locator(page, "usage-jobs", "2").wait_for()
    save_screenshot(page, "batch-completed")

    # The report link carries the key (a new tab cannot send headers); open it here.
    href = page.locator("#batch-report").get_attribute("href")
    page.goto(f"{live_api.base_url}{href}")
    page.get_by_text(QUESTION).first.wait_for()
    body = page.locator("body").inner_text()
    assert "UA" in body and "58665" in re.sub(r"[,\u202f\u00a0]", "", body)
    assert page.locator("svg, img").count() >= 2, "each answer's chart is in the report"
    save_screenshot(page, "batch-report")
