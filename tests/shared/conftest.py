"""Fixtures for the shared package's tests."""
from __future__ import annotations

import pytest

from tests.utils.tls_proxy import TlsProxy, self_signed_certificate


@pytest.fixture(scope="session")
def tls_proxy(tmp_path_factory):
    """TLS on a loopback port in front of the test Redis (127.0.0.1:6379), with a
    self-signed certificate for 127.0.0.1 at ``tls_proxy.cert_path``."""
    cert_path, key_path = self_signed_certificate(tmp_path_factory.mktemp("tls"))
    with TlsProxy("127.0.0.1", 6379, cert_path, key_path) as proxy:
        proxy.cert_path = cert_path
        yield proxy
