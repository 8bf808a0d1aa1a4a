"""Batch webhooks: which URLs may be called, and how a delivery is signed.

A webhook URL goes through the outbound policy (``shared/outbound.py``): public hosts
are called, private, loopback and metadata ones only when ``SUNRISE_OUTBOUND_ALLOW``
(or the deprecated ``SUNRISE_WEBHOOK_ALLOWED_HOSTS``, merged into it) lists them, the
app's database and Redis never. The check runs when the batch is accepted and again
before every delivery, which then connects to the checked address itself (the Host
header and TLS name stay the URL's), so a name that changes its answer in between
reaches nothing new; deliveries never follow redirects. A receiver verifies a delivery by recomputing

    hex(HMAC-SHA256(secret, "<X-Sunrise-Timestamp>." + raw body))

and comparing it with ``X-Sunrise-Signature: sha256=<hex>``; the timestamp lets
it refuse replays of old deliveries.
"""
from __future__ import annotations

import hashlib
import hmac
import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit

from shared.errors import OutboundRefused, ValidationFailed
from shared.outbound import OutboundPolicy

SIGNATURE_HEADER = "X-Sunrise-Signature"
TIMESTAMP_HEADER = "X-Sunrise-Timestamp"


@dataclass(frozen=True)
class WebhookTarget:
    """A checked webhook URL and the addresses it may be delivered to."""

    url: str
    host: str
    addresses: tuple[str, ...]

    def pinned(self) -> tuple[str, dict[str, str], dict[str, str]]:
        """(URL naming a checked address, headers, httpx request extensions): the request
        goes to that address while Host and the TLS server name (httpx's public
        ``sni_hostname`` extension) stay the URL's. IPv4 first: one address is tried, and
        a receiver listening on one family is most often listening on IPv4."""
        parts = urlsplit(self.url)
        address = sorted(self.addresses, key=lambda a: ipaddress.ip_address(a).version)[0]
        shown = f"[{address}]" if ipaddress.ip_address(address).version == 6 else address
        netloc = shown + (f":{parts.port}" if parts.port else "")
        return (parts._replace(netloc=netloc).geturl(), {"Host": parts.netloc},
                {"sni_hostname": self.host})


def check_webhook_url(url: str, policy: OutboundPolicy, *, require_https: bool) -> WebhookTarget:
    """Accept ``url`` only if it is a plain http(s) URL whose host the outbound policy
    allows (every address it resolves to). Raises ValidationFailed (OutboundRefused for
    the destination) naming the reason otherwise."""
    if any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in url):
        # Python's URL parser silently drops tabs and newlines, so the host check below
        # would pass a URL that no HTTP client sends (and a CR LF could forge headers).
        raise ValidationFailed("webhook_url must not contain spaces or control characters.")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise ValidationFailed(f"webhook_url is not a valid URL: {exc}") from exc
    schemes = ("https",) if require_https else ("http", "https")
    if parts.scheme not in schemes:
        raise ValidationFailed(f"webhook_url must use {' or '.join(schemes)}.")
    host = (parts.hostname or "").lower()
    if not host or parts.username or parts.password:
        raise ValidationFailed("webhook_url needs a host and must not carry credentials.")
    port = port or (443 if parts.scheme == "https" else 80)
    try:
        addresses = policy.resolve(host, port)
    except OutboundRefused as exc:
        raise OutboundRefused(f"webhook_url: {exc.detail}") from None
    return WebhookTarget(url, host, tuple(addresses))


def sign(secret: str, timestamp: int, body: bytes) -> str:
    """The ``X-Sunrise-Signature`` value for ``body`` sent at ``timestamp``."""
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return "sha256=" + digest.hexdigest()


def verify(secret: str, timestamp: str, body: bytes, signature: str) -> bool:
    """True if ``signature`` is ours for ``body`` at ``timestamp`` (constant time)."""
    try:
        expected = sign(secret, int(timestamp), body)
    except ValueError:
        return False
    return hmac.compare_digest(expected, signature)
