"""Where a schedule delivers: checking its targets when it is saved and again before
each delivery (``shared/outbound.py`` through ``shared/webhooks.py``: never the app's
own services, never loopback, link-local or metadata addresses unless
``SUNRISE_OUTBOUND_ALLOW`` admits them)."""
from __future__ import annotations

from typing import Any

from shared.config import Settings
from shared.errors import OutboundRefused, ValidationFailed
from shared.outbound import OutboundPolicy
from shared.webhooks import WebhookTarget, check_webhook_url


def target_url(target: dict[str, Any]) -> str | None:
    """The URL an HTTP target posts to (None for email)."""
    return target.get("webhook_url") or target.get("url")


def describe(target: dict[str, Any]) -> str:
    """What a delivery record names as its target."""
    if target["type"] == "email":
        return ", ".join(target["to"])
    return target_url(target) or ""


def check_target(settings: Settings, target: dict[str, Any], index: int) -> WebhookTarget | None:
    """The checked HTTP destination of ``target`` (None for email), or ValidationFailed
    (OutboundRefused) whose detail starts with the field: ``deliver[i].url``."""
    url = target_url(target)
    if url is None:
        return None
    field = f"deliver[{index}].{'webhook_url' if target['type'] == 'slack' else 'url'}"
    try:
        return check_webhook_url(url, OutboundPolicy.from_settings(settings),
                                 require_https=settings.env == "production")
    except OutboundRefused as exc:
        raise OutboundRefused(f"{field}: {exc.detail}", field=field) from None
    except ValidationFailed as exc:
        raise ValidationFailed(f"{field}: {exc.detail}", field=field) from None
