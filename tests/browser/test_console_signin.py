"""Console sign-in in real Chromium through a real OpenID provider, end to end.

The provider is oidc-provider (npm) on Node.js (``tests/utils/oidc_provider.py``); the
API is the real server (gunicorn) configured with it. The browser follows the real
redirects: console → provider's login form → consent → back to the console, signed in
with a session cookie and no key in localStorage → asks a question → signs out.
"""
from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from tests.browser.conftest import save_screenshot
from tests.browser.console_page import ConsolePage
from tests.utils.live_api import LiveApi
from tests.utils.oidc_provider import OidcProvider

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def oidc_live_api(base_settings, celery_worker) -> Iterator[LiveApi]:
    """The provider's address is known before it starts (its socket is bound first), so
    the API can be told its issuer, and the provider the API's callback."""
    provider = OidcProvider([])
    api = LiveApi(base_settings, oidc_issuer=provider.issuer,
                  oidc_client_id=provider.client_id,
                  oidc_client_secret=provider.client_secret,
                  oidc_tenant=f"oidc-browser-{uuid.uuid4().hex[:8]}",
                  oidc_scopes="openid email groups",
                  oidc_roles={"analysts": "analyst", "admins": "admin"})
    with api:
        provider.add_redirect_uri(f"{api.base_url}/auth/oidc/callback")
        with provider:
            api.provider = provider
            yield api


def test_sign_in_through_the_provider_ask_and_sign_out(page, oidc_live_api, fake_llm):
    console = ConsolePage(page, oidc_live_api.base_url).open()
    sign_in = page.locator("[data-testid=sign-in]")
    sign_in.wait_for(state="visible")
    sign_in.click()

    # The provider's own pages: the login form, then the consent form.
    page.wait_for_url(f"{oidc_live_api.provider.issuer}/**")
    page.fill("input[name=login]", "ada")
    page.fill("input[name=password]", "any password")
    page.click("button[type=submit]")
    page.locator("button[type=submit]", has_text="Continue").wait_for()
    save_screenshot(page, "oidc-consent")
    page.click("button[type=submit]")

    # Back in the console, signed in: a session cookie scripts cannot read, no key stored.
    page.wait_for_url(f"{oidc_live_api.base_url}/**")
    who = page.locator("[data-testid=signed-in-as]")
    who.filter(has_text="ada@example.test").wait_for()
    assert "(analyst)" in who.inner_text()
    assert page.locator("[data-testid=key-form]").is_hidden()
    assert page.evaluate("() => Object.keys(localStorage)") == []
    cookies = {c["name"]: c for c in page.context.cookies()}
    assert cookies["sunrise_session"]["httpOnly"] is True
    assert "sunrise_session" not in page.evaluate("() => document.cookie")

    console.ask("How many flights did each carrier fly?")
    answer = console.wait_for_answer()
    assert answer.inner_text().strip()
    # An analyst's sidebar says what is for admins rather than raising an error.
    assert page.locator("[data-testid=usage-unavailable]").inner_text().startswith("Usage is")
    assert page.locator("[data-testid=error]").is_hidden()
    save_screenshot(page, "oidc-signed-in-answer")

    page.click("[data-testid=sign-out]")
    page.locator("[data-testid=sign-in]").wait_for(state="visible")
    assert page.locator("[data-testid=signed-in-as]").inner_text() == ""
    # The old cookie no longer works anywhere: the session ended on the server.
    old = cookies["sunrise_session"]["value"]
    response = page.request.get(f"{oidc_live_api.base_url}/v1/conversations",
                                headers={"Cookie": f"sunrise_session={old}"})
    assert response.status == 401
    assert page.console_errors == []


def test_a_sign_in_link_session_shows_who_and_signs_out_without_oidc(page, live_api,
                                                                    base_settings):
    """The same account bar for a session started by a local sign-in link; with no
    OpenID provider configured there is no "Sign in" to offer once signed out."""
    from shared.db import session_scope
    from shared.keys import get_or_create_tenant
    from shared.people import create_sign_in_link, upsert_user

    with session_scope(base_settings.database_url) as s:
        tenant = get_or_create_tenant(s, f"link-{uuid.uuid4().hex[:8]}")
        user = upsert_user(s, tenant.id, external_id="ann", email="ann@example.test",
                           role="viewer", groups=[])
        token = create_sign_in_link(s, user)
    page.goto(f"{live_api.base_url}/v1/sign-in/{token}")
    who = page.locator("[data-testid=signed-in-as]")
    who.filter(has_text="ann@example.test (viewer)").wait_for()
    assert page.evaluate("() => Object.keys(localStorage)") == []
    page.click("[data-testid=sign-out]")
    page.locator("[data-testid=key-form]").wait_for(state="visible")
    assert page.locator("[data-testid=account]").is_hidden()
    assert page.locator("[data-testid=sign-in]").is_hidden()
    assert page.console_errors == []
