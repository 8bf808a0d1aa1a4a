"""Calling a batch's webhook when it completes: signed, retried with backoff, recorded."""
from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Callable
from typing import Any

import httpx
from sqlalchemy import update
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker

from shared.config import Settings
from shared.errors import ValidationFailed
from shared.models import Batch
from shared.outbound import OutboundPolicy
from shared.webhooks import SIGNATURE_HEADER, TIMESTAMP_HEADER, check_webhook_url, sign
from worker.http_delivery import post_with_retries

logger = logging.getLogger(__name__)


def deliver_webhook(settings: Settings, sessions: sessionmaker[Session], batch_id: str,
                    url: str, payload: dict[str, Any], *,
                    sleep: Callable[[float], None] = time.sleep) -> str:
    """POST ``payload`` to ``url`` until a 2xx, at most ``webhook_max_attempts`` times.

    Pauses ``webhook_backoff_s`` x 2^n between attempts (capped at a minute); a 4xx
    other than 408/429 is final. Records the outcome on the batch row
    (``delivered``, ``failed`` or ``refused``, a URL the outbound policy refuses now or
    that no HTTP client can send to) and returns it; never raises. Every attempt goes to
    the address checked here (``WebhookTarget.pinned``), not to a fresh DNS answer.
    """
    try:
        target = check_webhook_url(url, OutboundPolicy.from_settings(settings),
                                   require_https=settings.env == "production")
        httpx.URL(url)
    except (ValidationFailed, httpx.InvalidURL) as exc:
        logger.warning("batch %s: webhook not called: %s", batch_id,
                       getattr(exc, "detail", exc))
        _record(sessions, batch_id, "refused", 0)
        return "refused"
    body = json.dumps(payload, default=str, separators=(",", ":")).encode()
    delivery = str(uuid.uuid4())

    def headers() -> dict[str, str]:
        timestamp = int(time.time())
        return {"Content-Type": "application/json", "User-Agent": "sunrise-webhook/1",
                "X-Sunrise-Event": "batch.completed", "X-Sunrise-Delivery": delivery,
                TIMESTAMP_HEADER: str(timestamp),
                SIGNATURE_HEADER: sign(settings.webhook_secret, timestamp, body)}

    outcome = post_with_retries(target, body, headers, timeout_s=settings.webhook_timeout_s,
                                max_attempts=settings.webhook_max_attempts,
                                backoff_s=settings.webhook_backoff_s,
                                what=f"batch {batch_id}: webhook", sleep=sleep)
    status, attempts = outcome.status, outcome.attempts
    logger.info("batch %s: webhook %s after %d attempts", batch_id, status, attempts)
    _record(sessions, batch_id, status, attempts)
    return status


def _record(sessions: sessionmaker[Session], batch_id: str, status: str, attempts: int) -> None:
    # The outcome is informative only: a database that does not answer is logged, not
    # raised into the batch's assembly.
    try:
        with sessions.begin() as s:
            s.execute(update(Batch).where(Batch.id == batch_id)
                      .values(webhook_status=status, webhook_attempts=attempts))
    except DBAPIError as exc:
        logger.warning("batch %s: webhook outcome %s not recorded: %s", batch_id, status, exc)
