"""Per-tenant request rate limit: a fixed one-minute window counter in Redis."""
from __future__ import annotations

import logging
import time

from api.context import Services
from shared.errors import RateLimited

logger = logging.getLogger(__name__)


def check_rate(svc: Services, tenant_id: int, *, cost: int = 1) -> None:
    """Count ``cost`` requests for the tenant; raise RateLimited (429) over the limit.

    Fails open when Redis is unreachable: accepting work matters more than metering it.
    """
    limit = svc.settings.rate_limit_per_minute
    window = int(time.time() // 60)
    key = f"sunrise:rate:{tenant_id}:{window}"
    try:
        pipe = svc.redis.pipeline(transaction=False)
        pipe.incrby(key, cost)
        pipe.expire(key, 120)
        used, _ = pipe.execute()
    except Exception as exc:
        logger.warning("rate limit not checked (Redis unavailable: %s)", exc)
        return
    if used > limit:
        retry_after = max(1, 60 - int(time.time()) % 60)
        raise RateLimited(f"Rate limit of {limit} requests a minute exceeded; "
                          f"retry in {retry_after} s.", headers={"Retry-After": str(retry_after)})
