"""The console in real headless Chromium against the real API, worker and offline model:
ask a question, watch it live, read an answer with a rendered chart, switch conversations.
"""
from __future__ import annotations

import json
import re

import pytest

from tests.browser.conftest import save_screenshot
from tests.browser.console_page import CHART_MARKS, ConsolePage

pytestmark = pytest.mark.browser

QUESTION = "How many flights did each carrier fly?"
SECOND_QUESTION = "What is the average departure delay per month?"


FLIGHTS_PER_CARRIER = "SELECT carrier, count(*) FROM flights GROUP BY 1 ORDER BY 2 DESC"


def _digits(text: str) -> str:
    return re.sub(r"[,\u202f\u00a0 ]", "", text)


def test_question_streams_progress_and_renders_a_chart(page, live_api, console_key, fake_llm,
                                                         sample_query):
    truth = sample_query(FLIGHTS_PER_CARRIER)
    top_carrier, top_flights = truth[0]
    console = ConsolePage(page, live_api.base_url).open(console_key)

    console.ask(QUESTION)
    answer = console.wait_for_answer()

    # The answer names the top carrier and its real count, with the chart in place.
    text = answer.inner_text()
    assert top_carrier in text and str(top_flights) in _digits(text), text
    assert "{{chart" not in text
    assert page.locator(CHART_MARKS).count() >= len(truth), "one bar per carrier"
    # The live trace showed the LLM rounds (with tokens) and the SQL query as it ran.
    progress = page.locator("#progress")
    assert progress.locator("[data-kind=llm_call]").count() >= 2
    # (The trace is folded once the answer is in, so read text, not rendered text.)
    sql_item = progress.locator("[data-kind=tool_call]").first.text_content()
    assert "carrier" in sql_item.lower() and f"{len(truth)} rows" in sql_item, sql_item
    assert "executed" in sql_item
    llm_item = progress.locator("[data-kind=llm_call]").first.text_content()
    assert re.search(r"in [\d,]+", llm_item) and "tool_use" in llm_item, llm_item
    # The model thinks by default; its summaries (SSE `thinking`) are in the trace.
    thinking = progress.locator("[data-testid=thinking-text]")
    assert thinking.count() >= 1
    assert "FROM flights" in thinking.first.text_content(), "the plan names the query it runs"
    assert page.locator("[data-testid=job-usage]").is_visible()

    answer.locator("[data-testid=toggle-sql]").first.click()
    sql_box = answer.locator("[data-testid=chart-sql]").first
    sql_box.wait_for(state="visible")
    assert "FROM flights" in sql_box.inner_text()
    answer.locator("[data-testid=toggle-data]").first.click()
    data_box = answer.locator("[data-testid=chart-data]").first
    data_box.wait_for(state="visible")
    assert data_box.locator("tbody tr").count() == len(truth)
    assert str(top_flights) in _digits(data_box.inner_text())

    # All of that ran under the console's strict CSP: no eval, nothing from elsewhere.
    csp = page.request.get(f"{live_api.base_url}/").headers["content-security-policy"]
    assert "script-src 'self';" in csp and "unsafe-eval" not in csp

    shot = save_screenshot(page, "answer-with-chart")
    assert shot.stat().st_size > 20_000
    assert page.console_errors == []


def test_conversations_can_be_switched(page, live_api, console_key, fake_llm):
    console = ConsolePage(page, live_api.base_url).open(console_key)
    console.ask(QUESTION)
    answer = console.wait_for_answer()
    # Under the answer: when its data was current (the built-in sample's file time).
    as_of = answer.locator("[data-testid=data-as-of]")
    as_of.wait_for()
    assert as_of.inner_text().startswith("Data as of ")
    page.click("#new-conversation")
    console.ask(SECOND_QUESTION)
    console.wait_for_answer()
    items = console.conversation_items()
    items.nth(1).wait_for()
    assert items.count() == 2

    # Open the first conversation from the list: its history comes back, chart included.
    page.locator("[data-testid=conversation-item]", has_text="each carrier") \
        .locator("[data-testid=open-conversation]").click()
    history = page.locator("#history")
    history.locator("[data-testid=message-user]", has_text=QUESTION).wait_for()
    history.locator(CHART_MARKS).first.wait_for()
    assert history.locator("[data-testid=data-as-of]").count() == 1
    assert page.locator("#conversation-title").inner_text().startswith("How many flights")
    assert SECOND_QUESTION not in history.inner_text()
    active = page.locator("#conversations li.active")
    assert "each carrier" in active.inner_text()

    # And back to the second one.
    page.locator("[data-testid=conversation-item]", has_text="per month") \
        .locator("[data-testid=open-conversation]").click()
    history.locator("[data-testid=message-user]", has_text=SECOND_QUESTION).wait_for()
    assert QUESTION not in history.inner_text()
    save_screenshot(page, "conversation-switched")
    assert page.console_errors == []


def test_a_figure_no_query_supports_is_marked_with_its_reason(page, live_api, console_key,
                                                              fake_llm, sample_query):
    by_carrier = "SELECT carrier, count(*) AS flights FROM flights GROUP BY 1 ORDER BY 2 DESC"
    (top_carrier, top_flights), *_ = sample_query(by_carrier)
    answer_text = (f"**{top_carrier}** flew {top_flights:,} flights, about 12,345 more than "
                   "the next carrier. {{chart:0}}")
    scenario = fake_llm.scenario("console-numbers", [
        {"tool_calls": [{"sql": by_carrier}]},
        {"text": json.dumps({"answerText": answer_text, "charts": [
            {"type": "bar", "title": "Flights", "query_id": 1, "x": "carrier",
             "y": ["flights"]}]})},
    ])
    console = ConsolePage(page, live_api.base_url).open(console_key)
    console.ask(f"{scenario} How many flights did each carrier fly?")
    answer = console.wait_for_answer()

    marks = answer.locator("[data-testid=unsupported-figure]")
    assert marks.count() == 1
    assert marks.first.inner_text() == "12,345"
    assert marks.first.get_attribute("title") == "not found in any query result"
    assert f"{top_flights:,}" in answer.inner_text()  # supported: shown plainly

    # The mark survives a reload of the conversation from its history.
    page.click("#new-conversation")
    page.locator("[data-testid=conversation-item]", has_text="each carrier") \
        .locator("[data-testid=open-conversation]").first.click()
    history = page.locator("#history")
    history.locator("[data-testid=unsupported-figure]", has_text="12,345").wait_for()
    assert page.console_errors == []
