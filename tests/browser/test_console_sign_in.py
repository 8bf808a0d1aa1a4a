"""The console signed in with a one-time link, in real Chromium against the real API
(gunicorn), worker and offline model (issue 35): no key in the browser's storage, the
session in an HttpOnly cookie, a question asked (its POST carries the CSRF header) and
answered, sign-out ending the session."""
from __future__ import annotations

import uuid

import httpx
import pytest

from shared.db import session_scope
from shared.keys import get_or_create_tenant
from shared.people import create_sign_in_link, upsert_user
from tests.browser.console_page import ConsolePage

pytestmark = pytest.mark.browser

QUESTION = "How many flights did each carrier fly?"


def test_a_sign_in_link_opens_the_console_without_a_key(page, live_api, base_settings,
                                                        fake_llm):
    with session_scope(base_settings.database_url) as s:
        tenant = get_or_create_tenant(s, f"browser-{uuid.uuid4().hex[:10]}")
        user = upsert_user(s, tenant.id, external_id="ann", email="ann@example.com",
                           role="analyst", groups=())
        token = create_sign_in_link(s, user)

    page.goto(f"{live_api.base_url}/v1/sign-in/{token}")
    page.wait_for_url(f"{live_api.base_url}/")
    console = ConsolePage(page, live_api.base_url)
    # A session shows who is signed in, and no key form (nothing to store).
    signed_in = page.locator("[data-testid=signed-in-as]")
    signed_in.wait_for()
    assert "ann@example.com (analyst)" in signed_in.inner_text()
    assert page.locator("#key-form").is_hidden()
    cookies = {c["name"]: c for c in page.context.cookies()}
    assert cookies["sunrise_session"]["httpOnly"] is True
    assert cookies["sunrise_session"]["sameSite"] == "Lax"
    assert page.evaluate("() => localStorage.getItem('sunrise.apiKey')") is None

    console.ask(QUESTION)
    console.wait_for_answer()
    assert console.conversation_items().count() == 1
    assert "Usage is shown to admins." in page.locator("[data-testid=usage-unavailable]"
                                                       ).inner_text()
    assert page.console_errors == []

    # Sign out from the page (the console's own fetch carries the CSRF header).
    status = page.evaluate("""async () => {
        const csrf = document.cookie.match(/(?:^|;\\s*)sunrise_csrf=([^;]*)/)[1];
        const r = await fetch('/v1/sign-out', {method: 'POST',
                                               headers: {'X-CSRF-Token': csrf}});
        return r.status; }""")
    assert status == 204
    stale = httpx.get(f"{live_api.base_url}/v1/me",
                      cookies={"sunrise_session": cookies["sunrise_session"]["value"]})
    assert stale.status_code == 401
