"""Fixtures for console sign-in: the real OpenID provider (oidc-provider on Node.js), a
man in the middle on its back channel, and an app configured for both."""
from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from tests.utils.oidc_provider import OidcProvider
from tests.utils.oidc_tamper import TamperingProxy

# Flask's test client is http://localhost; the browser tests add the live API's callback.
TEST_CLIENT_CALLBACK = "http://localhost/auth/oidc/callback"


@pytest.fixture(scope="session")
def oidc_provider() -> Iterator[OidcProvider]:
    with OidcProvider([TEST_CLIENT_CALLBACK]) as provider:
        yield provider


@pytest.fixture
def oidc_proxy(oidc_provider) -> Iterator[TamperingProxy]:
    proxy = TamperingProxy(oidc_provider)
    yield proxy
    proxy.close()


@pytest.fixture
def oidc_settings(base_settings, oidc_provider, oidc_proxy):
    """Settings of an app that signs people in through the proxy into a fresh tenant."""
    return base_settings.model_copy(update={
        "oidc_issuer": oidc_proxy.url,
        "oidc_client_id": oidc_provider.client_id,
        "oidc_client_secret": oidc_provider.client_secret,
        "oidc_tenant": f"oidc-{uuid.uuid4().hex[:10]}",
        "oidc_scopes": "openid email groups",
        "oidc_roles": {"admins": "admin", "analysts": "analyst"},
    })


@pytest.fixture
def settings(oidc_settings):
    """The root conftest's ``app`` and ``client`` are built from these here."""
    return oidc_settings
