"""The trust loop in the console, in real headless Chromium against the real API, worker
and offline model: an answer is voted down with a comment, the Review panel shows it
with its SQL and keeps a corrected query, the same question in other words comes back
with the "verified" mark (the verified question on hover), and an ambiguous question's
options are buttons that answer it."""
from __future__ import annotations

import re

import pytest

from tests.api.test_verified_queries import CORRECTED, FLIGHTS
from tests.browser.conftest import save_screenshot
from tests.browser.console_page import CHART_MARKS, ConsolePage
from tests.utils.dataset_files import write_file

pytestmark = pytest.mark.browser


def _answered(page) -> None:
    page.locator("#job-status.succeeded").wait_for()
    page.locator("#answer [data-testid=feedback]").wait_for()


def test_down_vote_review_verify_and_the_paraphrase_is_marked(page, live_api, console_key,
                                                               fake_llm, tmp_path):
    console = ConsolePage(page, live_api.base_url).open(console_key)
    status = console.upload_dataset("flights", write_file(tmp_path, "flights.csv", FLIGHTS))
    assert status.startswith("Ready: flights"), status

    console.ask("Which carrier has the largest arrival delay?")
    _answered(page)
    assert page.locator("#answer [data-testid=verified-mark]").count() == 0
    page.fill("#answer [data-testid=feedback-comment]", "I meant the average")
    page.click("#answer [data-testid=thumb-down]")
    page.locator("#answer [data-testid=feedback-state]", has_text="rated wrong").wait_for()

    page.click("#review-refresh")
    item = page.locator("#review [data-testid=review-item]")
    item.wait_for()
    assert "Which carrier has the largest arrival delay?" in item.inner_text()
    assert "I meant the average" in item.inner_text()
    assert "FROM" in item.locator(".review-sql").inner_text().upper()
    item.locator("[data-testid=verify-question]").fill(
        "Which carrier had the highest average arrival delay?")
    item.locator("[data-testid=verify-sql]").fill("SELECT nope FROM flights")
    item.locator("[data-testid=verify-submit]").click()
    item.locator("[data-testid=verify-state]", has_text="Not kept").wait_for()
    assert "nope" in item.locator("[data-testid=verify-state]").inner_text()
    item.locator("[data-testid=verify-sql]").fill(CORRECTED)
    item.locator("[data-testid=verify-submit]").click()
    item.locator("[data-testid=verify-state]", has_text="Verified").wait_for()

    console.ask("Which carrier has the worst average arrival delay?")
    _answered(page)
    mark = page.locator("#answer [data-testid=verified-mark]")
    mark.wait_for()
    assert mark.get_attribute("title") == \
        "Verified query: Which carrier had the highest average arrival delay?"
    assert "DL" in page.locator("#answer").inner_text()
    save_screenshot(page, "trust-verified")
    assert page.console_errors == []


def test_a_clarifying_question_offers_buttons_and_one_answers_it(page, live_api, console_key,
                                                                  fake_llm, tmp_path):
    console = ConsolePage(page, live_api.base_url).open(console_key)
    console.upload_dataset("flights", write_file(tmp_path, "flights.csv", FLIGHTS))
    console.ask("What is the average delay by carrier?")
    _answered(page)
    options = page.locator("#answer [data-testid=clarify-option]")
    assert options.count() == 2
    assert sorted(options.all_inner_texts()) == [
        "What is the average arrival delay by carrier?",
        "What is the average departure delay by carrier?"]
    options.filter(has_text=re.compile("departure")).click()
    page.locator("#current-question", has_text="departure delay").wait_for()
    page.locator("#answer").locator(CHART_MARKS).first.wait_for()
    _answered(page)
    assert page.locator("#answer [data-testid=clarify-option]").count() == 0
    assert page.locator("#history [data-testid=message-user]").count() == 1
    assert page.console_errors == []
