"""What the console shows when things go wrong or are stopped: a rejected key, a rate
limit, a failed job with its message, and a job cancelled from the Cancel button.
"""
from __future__ import annotations

import re

import pytest

from tests.browser.conftest import save_screenshot
from tests.browser.console_page import ConsolePage

pytestmark = pytest.mark.browser

QUESTION = "How many flights did each carrier fly?"


def test_first_visit_asks_for_a_key_without_an_error(page, live_api):
    ConsolePage(page, live_api.base_url).open()
    page.locator("#key-state", has_text="enter your API key").wait_for()
    assert page.locator("#key-form.needs-key").count() == 1
    assert page.locator("#error").is_hidden()


def test_a_rejected_key_says_so(page, live_api):
    console = ConsolePage(page, live_api.base_url).open("sk-sunrise-not-a-real-key")
    assert "API key is missing or was rejected" in console.error_text()
    assert page.locator("#error").get_attribute("data-status") == "401"
    assert page.locator("#key-form.needs-key").count() == 1
    assert page.locator("#key-state").inner_text() == "key rejected"

    # Asking with it fails the same way, and the question is kept for a retry.
    page.click("#error-dismiss")
    console.ask(QUESTION)
    assert "API key is missing or was rejected" in console.error_text()
    assert page.locator("#question").input_value() == QUESTION
    assert page.locator("#ask").is_enabled() and page.locator("#cancel").is_hidden()
    save_screenshot(page, "error-bad-key")


def test_a_rate_limit_shows_when_to_retry(page, strict_live_api, console_key):
    console = ConsolePage(page, strict_live_api.base_url).open(console_key)
    console.ask(QUESTION)
    text = console.error_text()
    assert "Rate limited (429)" in text, text
    assert re.search(r"retry (in|after) \d+ s", text, re.IGNORECASE), text
    assert ".." not in text
    assert page.locator("#question").input_value() == QUESTION
    save_screenshot(page, "error-rate-limited")


def test_a_load_sent_before_the_key_was_saved_does_not_reject_it(page, strict_live_api,
                                                                 console_key):
    """The page's first loads go out with no key. One answered (401) only after a key was
    saved said "key rejected" and put its 401 in the banner, where the Ask's 429 was
    expected (the rate-limit test read it so once). Here such a load is held until the
    key is saved: its 401 is about no key in use now."""
    held = []
    keyless = re.compile(r"/v1/conversations(\?|$)")

    def hold_keyless(route):
        if "authorization" in route.request.headers:
            route.continue_()
        else:
            held.append(route)

    page.route(keyless, hold_keyless)
    console = ConsolePage(page, strict_live_api.base_url).open()
    for _ in range(200):  # bounded: 10 s for the page's first load to be held
        if held:
            break
        page.wait_for_timeout(50)
    assert held, "the page's first load of conversations was not seen"
    console.save_key(console_key)
    with page.expect_response(lambda r: keyless.search(r.url) and r.status == 401):
        for route in held:
            route.continue_()
    console.ask(QUESTION)
    page.locator("#error", has_text="Rate limited (429)").wait_for()
    assert page.locator("#key-state").inner_text() == "key saved"
    assert "rejected" not in console.error_text()


def test_a_failed_job_shows_its_code_and_message(page, live_api, console_key, fake_llm,
                                                 base_settings):
    # A model that never stops calling tools runs into the round limit; it repeats
    # itself, so the trace shows queries answered from the job's SQL cache too.
    rounds = base_settings.max_tool_rounds
    loop = [{"tool_calls": [{"sql": f"SELECT {i % 3} AS n"}]} for i in range(rounds + 2)]
    marker = fake_llm.scenario("browser-endless-tools", loop)
    console = ConsolePage(page, live_api.base_url).open(console_key)

    console.ask(f"{marker} Keep querying forever")
    console.wait_for_status("failed")
    job_error = page.locator("[data-testid=job-error]")
    job_error.wait_for()
    assert "tool_round_limit" in job_error.inner_text()
    assert "narrower question" in job_error.inner_text()
    assert "tool_round_limit" in console.error_text()
    # Each of those rounds showed up live as an SQL step; repeats came from the cache.
    steps = page.locator("#progress [data-kind=tool_call]")
    assert steps.count() == rounds
    assert steps.locator(".chip", has_text="cached").count() == rounds - 3
    assert steps.locator(".chip", has_text="executed").count() == 3
    save_screenshot(page, "error-failed-job")
    assert page.console_errors == []


def test_cancel_stops_a_running_job(page, live_api, console_key, fake_llm):
    # A slow model keeps the job running long enough to press Cancel.
    fake_llm.latency(3000)
    console = ConsolePage(page, live_api.base_url).open(console_key)

    console.ask(QUESTION)
    console.wait_for_status("running")  # on a worker, so the cancel lands at a round boundary
    page.locator("#cancel").click()
    page.locator("[data-testid=job-cancelled]").wait_for()
    console.wait_for_status("cancelled")
    assert page.locator("#cancel").is_hidden() and page.locator("#ask").is_enabled()
    assert page.locator("#answer .chart").count() == 0
    trace = page.locator("#progress").text_content()
    assert "Cancel requested" in trace and "Cancelled" in trace, trace
    assert page.console_errors == []
