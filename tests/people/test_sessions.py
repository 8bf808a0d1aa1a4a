"""Local console sign-in (issue 35): a one-time link starts a server-side session in an
HttpOnly, SameSite=Lax cookie (Secure except for plain http on 127.0.0.1/localhost in
dev and test); every change made with it needs the CSRF header; sign-out ends it."""
from __future__ import annotations

from sqlalchemy import select

from shared.db import session_scope
from shared.models import AuditEntry, User
from shared.people import create_sign_in_link
from tests.people.helpers import make_user, tenant_of


def _link(settings, tenant_id: int, external_id: str, role: str = "analyst") -> str:
    user_id = make_user(settings, tenant_id, external_id, role=role)
    with session_scope(settings.database_url) as s:
        return create_sign_in_link(s, s.get(User, user_id))


def _cookies(response) -> dict[str, str]:
    return {header.split("=", 1)[0]: header
            for header in response.headers.getlist("Set-Cookie")}


def test_a_sign_in_link_starts_a_session_that_needs_csrf_for_changes(
        app, settings, tenant_key):
    tenant_id, _ = tenant_of(settings, tenant_key)
    token = _link(settings, tenant_id, "sam")
    browser = app.test_client()
    signed_in = browser.get(f"/v1/sign-in/{token}")
    assert signed_in.status_code == 303 and signed_in.headers["Location"].endswith("/")
    cookies = _cookies(signed_in)
    session_cookie = cookies["sunrise_session"]
    assert "HttpOnly" in session_cookie and "SameSite=Lax" in session_cookie
    assert "Secure" not in session_cookie  # plain http on localhost in the test env
    assert "HttpOnly" not in cookies["sunrise_csrf"]  # the console's script echoes it

    # No key needed: the cookie acts as the user.
    me = browser.get("/v1/me")
    assert me.status_code == 200 and me.get_json()["user"]["external_id"] == "sam"
    # A change without the CSRF header is refused and changes nothing.
    forged = browser.post("/v1/jobs", json={"message": "How many flights?"})
    assert forged.status_code == 403 and "X-CSRF-Token" in forged.get_json()["detail"]
    wrong = browser.post("/v1/jobs", json={"message": "q"}, headers={"X-CSRF-Token": "x"})
    assert wrong.status_code == 403
    csrf = browser.get_cookie("sunrise_csrf").value
    ok = browser.post("/v1/jobs", json={"message": "How many flights?"},
                      headers={"X-CSRF-Token": csrf})
    assert ok.status_code == 202, ok.get_data(as_text=True)
    assert [c["conversation_id"] for c in browser.get("/v1/conversations").get_json()[
        "items"]] == [ok.get_json()["conversation_id"]]

    # The link works once.
    assert app.test_client().get(f"/v1/sign-in/{token}").status_code == 404

    out = browser.post("/v1/sign-out", headers={"X-CSRF-Token": csrf})
    assert out.status_code == 204
    assert browser.get_cookie("sunrise_session") is None
    # The ended session no longer works even if its cookie is replayed.
    replay = app.test_client()
    replay.set_cookie("sunrise_session", session_cookie.split(";")[0].split("=", 1)[1])
    assert replay.get("/v1/me").status_code == 401

    with session_scope(settings.database_url) as s:
        actions = s.scalars(select(AuditEntry.action).where(
            AuditEntry.tenant_id == tenant_id).order_by(AuditEntry.id)).all()
    assert actions.count("sign_in") == 1 and actions.count("sign_out") == 1


def test_session_cookies_are_secure_over_https(app, settings, tenant_key):
    tenant_id, _ = tenant_of(settings, tenant_key)
    token = _link(settings, tenant_id, "tls-user")
    signed_in = app.test_client().get(f"/v1/sign-in/{token}",
                                      base_url="https://sunrise.example")
    cookies = _cookies(signed_in)
    assert all("Secure" in cookies[name] for name in ("sunrise_session", "sunrise_csrf"))


def test_sign_out_with_the_cookie_but_without_csrf_is_refused(app, settings, tenant_key):
    tenant_id, _ = tenant_of(settings, tenant_key)
    browser = app.test_client()
    browser.get(f"/v1/sign-in/{_link(settings, tenant_id, 'csrf-victim')}")
    assert browser.post("/v1/sign-out").status_code == 403
    assert browser.get("/v1/me").status_code == 200


def test_unknown_or_hostile_sign_in_tokens_are_404(client):
    for token in ("nope", "x" * 500, "%27%20OR%201%3D1"):
        response = client.get(f"/v1/sign-in/{token}")
        assert response.status_code == 404
        assert "application/problem+json" in response.content_type
