"""The console's Schedules panel against the real API and worker: a schedule's next run,
pause and resume, run now, and the run's delivery status once the worker delivered it
to a real webhook receiver."""
from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import expect

from tests.browser.conftest import save_screenshot
from tests.browser.console_page import ConsolePage
from tests.utils.delivery_receivers import http_receiver

pytestmark = pytest.mark.browser


def test_schedules_panel_pauses_resumes_runs_now_and_shows_delivery(
        page, live_api, console_key, fake_llm):
    with http_receiver() as receiver:
        resp = httpx.post(f"{live_api.base_url}/v1/schedules",
                          headers={"Authorization": f"Bearer {console_key}"}, json={
                              "name": "Morning flights", "cron": "0 7 * * *",
                              "timezone": "Europe/Berlin",
                              "questions": ["How many flights did each carrier fly?"],
                              "deliver": [{"type": "webhook", "url": f"{receiver.url}/h"}]})
        assert resp.status_code == 201, resp.text
        ConsolePage(page, live_api.base_url).open(console_key)
        card = page.locator("[data-testid=schedule]")
        expect(card).to_have_count(1)
        expect(card.locator("[data-testid=schedule-next]")).to_contain_text("next ")

        card.locator("[data-testid=schedule-toggle]").click()
        expect(card.locator("[data-testid=schedule-next]")).to_have_text("paused")
        card.locator("[data-testid=schedule-toggle]").click()
        expect(card.locator("[data-testid=schedule-next]")).to_contain_text("next ")

        card.locator("[data-testid=schedule-run-now]").click()
        run = card.locator("[data-testid=schedule-run]")
        expect(run).to_have_count(1)
        for _ in range(60):
            if run.get_attribute("data-status") == "delivered":
                break
            page.wait_for_timeout(1000)
            page.click("[data-testid=schedules-refresh]")
        expect(run).to_have_attribute("data-status", "delivered")
        expect(run).to_contain_text("webhook delivered")
        assert len(receiver.at("/h")) == 1
    save_screenshot(page, "schedules-panel")
    assert page.console_errors == []
