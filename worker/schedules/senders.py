"""Sending one delivery of a run: email over SMTP, Slack and webhooks over HTTP. Each
returns an ``Outcome`` and never raises; every target is checked again before sending
(``shared/schedules/targets.py``)."""
from __future__ import annotations

import logging
import smtplib
import ssl
import time
import uuid
from collections.abc import Callable
from email.message import EmailMessage
from urllib.parse import parse_qs, unquote, urlsplit

from shared.config import Settings
from shared.errors import ValidationFailed
from shared.schedules.targets import check_target
from shared.webhooks import SIGNATURE_HEADER, TIMESTAMP_HEADER, sign
from worker.http_delivery import MAX_BACKOFF_S, Outcome, post_with_retries

logger = logging.getLogger(__name__)


def sender_address(settings: Settings) -> str:
    query = parse_qs(urlsplit(settings.smtp_url).query)
    return query.get("from", ["sunrise@localhost"])[0]


def send_email(settings: Settings, msg: EmailMessage, what: str, *,
               sleep: Callable[[float], None] = time.sleep) -> Outcome:
    """Send ``msg`` through ``SUNRISE_SMTP_URL`` (smtp://: STARTTLS when the server
    offers it; smtps://: TLS from the start). Connection failures, timeouts and 4xx
    replies are retried like HTTP deliveries; a 5xx reply is final."""
    url = urlsplit(settings.smtp_url)
    outcome = Outcome("failed", 0)
    while outcome.attempts < max(1, settings.webhook_max_attempts):
        if outcome.attempts:
            sleep(min(MAX_BACKOFF_S, settings.webhook_backoff_s * 2 ** (outcome.attempts - 1)))
        outcome.attempts += 1
        try:
            _smtp_send(url, settings.webhook_timeout_s, msg)
        except smtplib.SMTPResponseException as exc:
            outcome.last_error = f"SMTP {exc.smtp_code}: {exc.smtp_error!r}"[:500]
            logger.warning("%s: attempt %d: %s", what, outcome.attempts, outcome.last_error)
            if exc.smtp_code >= 500:
                break
            continue
        except (OSError, smtplib.SMTPException) as exc:
            outcome.last_error = f"{type(exc).__name__}: {exc}"[:500]
            logger.warning("%s: attempt %d: %s", what, outcome.attempts, outcome.last_error)
            continue
        outcome.status, outcome.last_error = "delivered", None
        break
    return outcome


def _smtp_send(url, timeout_s: float, msg: EmailMessage) -> None:
    context = ssl.create_default_context()
    if url.scheme == "smtps":
        client = smtplib.SMTP_SSL(url.hostname, url.port or 465, timeout=timeout_s,
                                  context=context)
    else:
        client = smtplib.SMTP(url.hostname, url.port or 25, timeout=timeout_s)
    with client:
        client.ehlo()
        if url.scheme == "smtp" and client.has_extn("starttls"):
            client.starttls(context=context)
            client.ehlo()
        if url.username:
            client.login(unquote(url.username), unquote(url.password or ""))
        client.send_message(msg)


def send_http(settings: Settings, target: dict, index: int, body: bytes, *, secret: str | None,
              what: str, sleep: Callable[[float], None] = time.sleep) -> Outcome:
    """POST ``body`` (JSON) to a Slack or webhook target; signed with ``secret`` when
    given, as batch webhooks are (``shared/webhooks.py``)."""
    try:
        checked = check_target(settings, target, index)
    except ValidationFailed as exc:
        return Outcome("failed", 0, f"refused: {exc.detail}"[:500])
    delivery = str(uuid.uuid4())

    def headers() -> dict[str, str]:
        out = {"Content-Type": "application/json", "User-Agent": "sunrise-schedule/1"}
        if secret is not None:
            timestamp = int(time.time())
            out.update({"X-Sunrise-Event": "schedule.run", "X-Sunrise-Delivery": delivery,
                        TIMESTAMP_HEADER: str(timestamp),
                        SIGNATURE_HEADER: sign(secret, timestamp, body)})
        return out

    return post_with_retries(checked, body, headers, timeout_s=settings.webhook_timeout_s,
                             max_attempts=settings.webhook_max_attempts,
                             backoff_s=settings.webhook_backoff_s, what=what, sleep=sleep)
