"""Batch webhooks: which URLs may be called, and how a delivery is signed.

Only hosts the operator listed in ``SUNRISE_WEBHOOK_ALLOWED_HOSTS`` are ever
called (no SSRF into the private network through a user-supplied URL); the check
runs when the batch is accepted and again before every delivery, and deliveries
never follow redirects. A receiver verifies a delivery by recomputing

    hex(HMAC-SHA256(secret, "<X-Sunrise-Timestamp>." + raw body))

and comparing it with ``X-Sunrise-Signature: sha256=<hex>``; the timestamp lets
it refuse replays of old deliveries.
"""
from __future__ import annotations

import hashlib
import hmac
from urllib.parse import urlsplit

from shared.errors import ValidationFailed

SIGNATURE_HEADER = "X-Sunrise-Signature"
TIMESTAMP_HEADER = "X-Sunrise-Timestamp"


def check_webhook_url(url: str, allowed_hosts: list[str], *, require_https: bool) -> None:
    """Accept ``url`` only if its host (or host:port) is allow-listed.

    Raises ValidationFailed naming the reason otherwise.
    """
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
    allowed = {entry.strip().lower() for entry in allowed_hosts if entry.strip()}
    if host not in allowed and (port is None or f"{host}:{port}" not in allowed):
        raise ValidationFailed(
            f"webhook_url host {host!r} is not allowed; the operator lists allowed hosts in "
            "SUNRISE_WEBHOOK_ALLOWED_HOSTS.")


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
