"""POSTing a body to a checked outbound target until it is accepted: the one retry
policy of batch webhooks and schedule deliveries.

Every attempt goes to the address checked before (``WebhookTarget.pinned``), never to a
fresh DNS answer, and redirects are not followed. Network errors, timeouts, 5xx, 408 and
429 are retried with a pause of ``backoff_s`` x 2^n (capped at a minute), at most
``max_attempts`` times in all; any other 4xx is final.
"""
from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable

import httpx

from shared.webhooks import WebhookTarget

logger = logging.getLogger(__name__)

MAX_BACKOFF_S = 60.0


@dataclasses.dataclass
class Outcome:
    """``delivered`` or ``failed``, the attempts made and the last failure's words."""

    status: str
    attempts: int
    last_error: str | None = None


def post_with_retries(target: WebhookTarget, body: bytes, headers: Callable[[], dict[str, str]],
                      *, timeout_s: float, max_attempts: int, backoff_s: float, what: str,
                      sleep: Callable[[float], None] = time.sleep) -> Outcome:
    """POST ``body`` with ``headers()`` (called per attempt: a signature's timestamp is
    fresh each time) until a 2xx; never raises. ``what`` names the delivery in logs."""
    pinned_url, host_header, extensions = target.pinned()
    outcome = Outcome("failed", 0)
    with httpx.Client(timeout=timeout_s, follow_redirects=False) as http:
        while outcome.attempts < max(1, max_attempts):
            if outcome.attempts:
                sleep(min(MAX_BACKOFF_S, backoff_s * 2 ** (outcome.attempts - 1)))
            outcome.attempts += 1
            try:
                resp = http.post(pinned_url, content=body, extensions=extensions,
                                 headers={**host_header, **headers()})
            except httpx.HTTPError as exc:
                outcome.last_error = f"{type(exc).__name__}: {exc}"[:500]
                logger.warning("%s: attempt %d failed: %s", what, outcome.attempts, exc)
                continue
            if resp.is_success:
                outcome.status, outcome.last_error = "delivered", None
                break
            outcome.last_error = f"HTTP {resp.status_code}"
            logger.warning("%s: attempt %d answered %d", what, outcome.attempts,
                           resp.status_code)
            if 400 <= resp.status_code < 500 and resp.status_code not in (408, 429):
                break
    return outcome
