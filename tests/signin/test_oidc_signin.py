"""Console sign-in through a real OpenID provider, and the attacks on it that must fail.

The provider is oidc-provider (npm) on Node.js; its login and consent forms are walked
over HTTP (``OidcProvider.sign_in``); the browser-driven flow is in
tests/browser/test_console_signin.py. Every refused sign-in must leave nothing behind:
no user, no session, no sign-in in the audit log.
"""
from __future__ import annotations

import time
from urllib.parse import urlsplit

import pytest
from joserfc.jwk import RSAKey
from sqlalchemy import func, select

from shared.db import session_scope
from shared.models import AuditEntry, ConsoleSession, Tenant, User


def start(client, return_to: str | None = None) -> str:
    """GET /auth/oidc/login; returns the provider's authorization URL."""
    query = {} if return_to is None else {"return_to": return_to}
    response = client.get("/auth/oidc/login", query_string=query)
    assert response.status_code == 302, response.get_data(as_text=True)
    return response.headers["Location"]


def callback(client, callback_url: str):
    parts = urlsplit(callback_url)
    return client.get(f"{parts.path}?{parts.query}")


def sign_in(client, provider, login: str, return_to: str | None = None):
    return callback(client, provider.sign_in(start(client, return_to), login))


def tenant_rows(settings) -> dict[str, int]:
    with session_scope(settings.database_url) as s:
        tenant_id = s.scalar(select(Tenant.id).where(Tenant.name == settings.oidc_tenant))
        if tenant_id is None:
            return {"users": 0, "sessions": 0, "sign_ins": 0}
        count = lambda model, *where: s.scalar(select(func.count()).select_from(model)  # noqa: E731
                                               .where(model.tenant_id == tenant_id, *where))
        return {"users": count(User), "sessions": count(ConsoleSession),
                "sign_ins": count(AuditEntry, AuditEntry.action == "sign_in")}


def assert_refused(response, settings, words: str) -> None:
    assert response.status_code == 401, response.get_data(as_text=True)
    assert response.content_type == "application/problem+json"
    assert words in response.get_json()["detail"]
    assert "sunrise_session" not in response.headers.get("Set-Cookie", "")
    assert tenant_rows(settings) == {"users": 0, "sessions": 0, "sign_ins": 0}


def test_sign_in_provisions_the_user_and_starts_a_session(client, oidc_provider,
                                                          oidc_settings):
    response = sign_in(client, oidc_provider, "grace", return_to="/?conversation=7")
    assert response.status_code == 303
    assert response.headers["Location"] == "/?conversation=7"
    assert response.headers["Referrer-Policy"] == "no-referrer"
    cookies = response.headers.getlist("Set-Cookie")
    session_cookie = next(c for c in cookies if c.startswith("sunrise_session="))
    assert "HttpOnly" in session_cookie and "SameSite=Lax" in session_cookie
    with session_scope(oidc_settings.database_url) as s:
        user = s.scalar(select(User).join(Tenant, Tenant.id == User.tenant_id)
                        .where(Tenant.name == oidc_settings.oidc_tenant))
        assert (user.external_id, user.email, user.role, sorted(user.groups)) == (
            "grace", "grace@example.test", "admin", ["admins", "analysts"])
    assert tenant_rows(oidc_settings) == {"users": 1, "sessions": 1, "sign_ins": 1}
    # The session is the credential: no key, no Authorization header.
    assert client.get("/v1/conversations").status_code == 200


def test_roles_follow_the_claim_mapping_with_viewer_by_default(app, oidc_provider,
                                                               oidc_settings):
    for login, role in (("ada", "analyst"), ("linus", "viewer")):
        assert sign_in(app.test_client(), oidc_provider, login).status_code == 303
        with session_scope(oidc_settings.database_url) as s:
            assert s.scalar(select(User.role).join(Tenant, Tenant.id == User.tenant_id)
                            .where(Tenant.name == oidc_settings.oidc_tenant,
                                   User.external_id == login)) == role


def test_sign_out_ends_the_session(client, oidc_provider, oidc_settings):
    sign_in(client, oidc_provider, "ada")
    csrf = client.get_cookie("sunrise_csrf").value
    assert client.post("/v1/sign-out").status_code == 403  # no CSRF token: refused
    assert client.get("/v1/conversations").status_code == 200
    token = client.get_cookie("sunrise_session").value
    assert client.post("/v1/sign-out", headers={"X-CSRF-Token": csrf}).status_code == 204
    assert client.get("/v1/conversations").status_code == 401
    client.set_cookie("sunrise_session", token)  # a copy kept from before: ended too
    assert client.get("/v1/conversations").status_code == 401


def test_an_untouched_relayed_token_signs_in(client, oidc_provider, oidc_proxy,
                                             oidc_settings):
    """The control for the tampering tests: re-signing the claims unchanged with the
    provider's own key passes, so each refusal below is the check's doing."""
    oidc_proxy.tamper = lambda claims: (claims, oidc_provider.key)
    assert sign_in(client, oidc_provider, "ada").status_code == 303
    assert tenant_rows(oidc_settings)["sessions"] == 1


def test_a_forged_id_token_is_refused(client, oidc_provider, oidc_proxy, oidc_settings):
    attacker = RSAKey.generate_key(2048, parameters={"kid": oidc_provider.key.kid},
                                   private=True)
    oidc_proxy.tamper = lambda claims: ({**claims, "sub": "grace"}, attacker)
    assert_refused(sign_in(client, oidc_provider, "linus"), oidc_settings,
                   "ID token was refused")


def test_an_expired_id_token_is_refused(client, oidc_provider, oidc_proxy, oidc_settings):
    now = int(time.time())
    oidc_proxy.tamper = lambda claims: ({**claims, "iat": now - 7200, "exp": now - 3600},
                                        oidc_provider.key)
    assert_refused(sign_in(client, oidc_provider, "ada"), oidc_settings,
                   "ID token was refused")


def test_a_nonce_mismatch_is_refused(client, oidc_provider, oidc_proxy, oidc_settings):
    oidc_proxy.tamper = lambda claims: ({**claims, "nonce": "another-sign-in"},
                                        oidc_provider.key)
    assert_refused(sign_in(client, oidc_provider, "ada"), oidc_settings, "nonce")


def test_a_token_for_another_client_is_refused(client, oidc_provider, oidc_proxy,
                                               oidc_settings):
    oidc_proxy.tamper = lambda claims: ({**claims, "aud": "another-client", "azp": "another-client"},
                                        oidc_provider.key)
    assert_refused(sign_in(client, oidc_provider, "ada"), oidc_settings,
                   "ID token was refused")


def test_a_token_from_another_issuer_is_refused(client, oidc_provider, oidc_proxy,
                                               oidc_settings):
    oidc_proxy.tamper = lambda claims: ({**claims, "iss": "https://evil.example"},
                                        oidc_provider.key)
    assert_refused(sign_in(client, oidc_provider, "ada"), oidc_settings, "iss")


def test_a_state_mismatch_is_refused(client, oidc_provider, oidc_settings):
    url = oidc_provider.sign_in(start(client), "ada")
    tampered = url.replace("state=", "state=x")
    assert_refused(callback(client, tampered), oidc_settings, "state")


def test_a_callback_from_another_browsers_sign_in_is_refused(app, oidc_provider,
                                                            oidc_settings):
    """Login CSRF: the attacker's own code and state, delivered to the victim's browser."""
    attacker, victim = app.test_client(), app.test_client()
    url = oidc_provider.sign_in(start(attacker), "linus")
    start(victim)  # the victim has a sign-in of their own under way
    assert_refused(callback(victim, url), oidc_settings, "state")


def test_a_replayed_authorization_code_is_refused(app, oidc_provider, oidc_settings):
    client = app.test_client()
    url = oidc_provider.sign_in(start(client), "ada")
    saved_cookie = client.get_cookie("sunrise_signin").value
    assert callback(client, url).status_code == 303
    client.set_cookie("sunrise_signin", saved_cookie)  # even with the cookie as it was
    replay = callback(client, url)
    assert replay.status_code == 401
    assert "state" in replay.get_json()["detail"]
    assert tenant_rows(oidc_settings) == {"users": 1, "sessions": 1, "sign_ins": 1}


@pytest.mark.parametrize("target", [
    "https://evil.example/", "//evil.example/x", "/\\evil.example", "\\\\evil.example",
    "https:/evil.example", "javascript:alert(1)", "/%0d%0aLocation:x".replace("%0d%0a", "\r\n"),
    " /x", "evil.example",
])
def test_return_to_elsewhere_is_refused(client, oidc_settings, target):
    response = client.get("/auth/oidc/login", query_string={"return_to": target})
    assert response.status_code == 400
    assert "return_to" in response.get_json()["detail"]
    assert "Location" not in response.headers


def test_without_oidc_the_console_is_told_and_the_routes_are_404(base_settings):
    from api import create_app

    client = create_app(settings=base_settings).test_client()
    assert client.get("/auth/config").get_json()["oidc"] is False
    response = client.get("/auth/oidc/login")
    assert response.status_code == 404
    assert "SUNRISE_OIDC_ISSUER" in response.get_json()["detail"]


def test_with_oidc_the_console_is_offered_sign_in(client):
    assert client.get("/auth/config").get_json() == {
        "oidc": True, "sign_in_url": "/auth/oidc/login"}


def test_a_refusal_at_the_provider_is_said_and_changes_nothing(client, oidc_settings):
    start(client)
    response = client.get("/auth/oidc/callback", query_string={
        "error": "access_denied", "error_description": "End-User aborted interaction",
        "state": "whatever"})
    assert_refused(response, oidc_settings, "aborted interaction")


def test_an_unreachable_provider_is_a_503(oidc_settings):
    import socket

    from api import create_app

    with socket.create_server(("127.0.0.1", 0)) as closed:
        issuer = f"http://127.0.0.1:{closed.getsockname()[1]}"
    app = create_app(settings=oidc_settings.model_copy(update={"oidc_issuer": issuer,
                                                               "oidc_timeout_s": 2.0}))
    response = app.test_client().get("/auth/oidc/login")
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "5"
    assert "did not answer" in response.get_json()["detail"]
