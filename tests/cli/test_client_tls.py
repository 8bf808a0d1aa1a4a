"""``SunriseClient`` is cheap to make: every client shares one TLS context (httpx would
load the CA bundle, ~50 ms of CPU, for each), and that context still verifies."""
from __future__ import annotations

import ssl

from sunrise.client import SunriseClient


def _context(client: SunriseClient) -> ssl.SSLContext:
    return client.http._transport._pool._ssl_context


def test_clients_share_one_verifying_tls_context():
    with SunriseClient("http://127.0.0.1:1") as a, SunriseClient("https://127.0.0.1:1", "k") as b:
        assert _context(a) is _context(b)
        assert _context(b).verify_mode == ssl.CERT_REQUIRED
        assert _context(b).check_hostname
