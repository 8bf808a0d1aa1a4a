"""The OpenID Connect relying party: Authlib's Flask client, configured from Settings.

Authlib does the protocol through its public client API: discovery from the issuer's
``/.well-known/openid-configuration``, the authorization code flow with PKCE (S256) and a
nonce, the code exchange, and the ID token's checks (signature against the issuer's
JWKS, ``iss``, ``aud``, ``exp``, ``iat``, ``nonce``). What each sign-in must remember
between the redirect and the callback (state, PKCE verifier, nonce) is kept in Redis,
deleted when the callback reads it, so a state (and with it a code) serves once; the
browser holds only a signed marker in the ``sunrise_signin`` cookie.
"""
from __future__ import annotations

import hashlib
import hmac

from authlib.integrations.flask_client import OAuth
from flask import Flask, current_app

from api.resources import resources
from shared.config import Settings

CLIENT_NAME = "sunrise"
STATE_PREFIX = "sunrise:oidc:"
# The ID token's exp/iat may be off by this much between the provider's clock and ours.
CLOCK_LEEWAY_S = 30


class RedisStateCache:
    """The cache interface Authlib asks for (get/set/delete), on the app's Redis."""

    def __init__(self, redis_factory):
        self._redis = redis_factory

    def get(self, key: str):
        return self._redis().get(STATE_PREFIX + key)

    def set(self, key: str, value: str, expires: int | None = None) -> None:
        self._redis().set(STATE_PREFIX + key, value, ex=expires)

    def delete(self, key: str) -> None:
        self._redis().delete(STATE_PREFIX + key)


def init_app(app: Flask, settings: Settings) -> None:
    """Register the provider when OIDC is configured; the state cookie is signed with a
    key derived from SUNRISE_SECRET_KEYS (never a key of its own to forget)."""
    if not settings.oidc_enabled:
        return
    first_key = settings.secret_keys.split(",")[0].strip().encode()
    app.secret_key = hmac.new(first_key, b"sunrise-signin-cookie", hashlib.sha256).hexdigest()
    app.config.update(SESSION_COOKIE_NAME="sunrise_signin", SESSION_COOKIE_HTTPONLY=True,
                      SESSION_COOKIE_SAMESITE="Lax",
                      SESSION_COOKIE_SECURE=settings.env == "production")
    oauth = OAuth(app, cache=RedisStateCache(lambda: resources().redis))
    oauth.register(
        CLIENT_NAME,
        client_id=settings.oidc_client_id,
        client_secret=settings.oidc_client_secret,
        server_metadata_url=settings.oidc_issuer.rstrip("/") + "/.well-known/openid-configuration",
        client_kwargs={"scope": settings.oidc_scopes, "code_challenge_method": "S256",
                       "timeout": settings.oidc_timeout_s},
    )
    app.extensions["sunrise_oidc"] = oauth


def oidc_client():
    """The registered Authlib client of the current app, or None without OIDC."""
    oauth = current_app.extensions.get("sunrise_oidc")
    return None if oauth is None else oauth.create_client(CLIENT_NAME)
