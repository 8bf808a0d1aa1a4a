"""Per-tenant rate limits: fixed one-minute window counters in Redis.

Two budgets, because they protect different things:

- **requests** (``rate_limit_per_minute``): every authenticated ``/v1`` request,
  reads included, costs 1 -- long-polls, stream (re)connections, report downloads;
- **questions** (``question_limit_per_minute``): what reaches the model; ``POST
  /v1/jobs`` costs 1 and a batch of N questions costs N.

A request is refused (429 with ``Retry-After``, and not counted) when its cost would
take the minute's count past the budget -- except that a tenant that has spent
nothing yet this minute may make one request larger than the whole budget (a big
batch), which then uses up the minute. Both fail open when Redis is unreachable or
hung: accepting work matters more than metering it.
"""
from __future__ import annotations

import logging
import time

from flask import g

from api.context import Services, services
from shared.errors import RateLimited

logger = logging.getLogger(__name__)


def limit_requests() -> None:
    """``before_request`` hook, after ``authenticate``: one request unit."""
    _take(services(), "requests", g.tenant_id, 1)


def check_questions(svc: Services, tenant_id: int, questions: int) -> None:
    """Count ``questions`` question units; raise RateLimited (429) past the budget."""
    _take(svc, "questions", tenant_id, questions)


def _take(svc: Services, budget: str, tenant_id: int, cost: int) -> None:
    limit = {"requests": svc.settings.rate_limit_per_minute,
             "questions": svc.settings.question_limit_per_minute}[budget]
    window = int(time.time() // 60)
    key = f"sunrise:rate:{budget}:{tenant_id}:{window}"
    try:
        pipe = svc.redis.pipeline(transaction=False)
        pipe.incrby(key, cost)
        pipe.expire(key, 120)
        used, _ = pipe.execute()
        if used <= limit or used == cost:
            return
        svc.redis.decrby(key, cost)  # refused: it did not happen
    except Exception as exc:
        logger.warning("rate limit not checked (Redis unavailable: %s)", exc)
        return
    retry_after = max(1, 60 - int(time.time()) % 60)
    unit = "requests" if budget == "requests" else "questions"
    raise RateLimited(f"Rate limit of {limit} {unit} a minute exceeded (this one would take "
                      f"{used}); retry in {retry_after} s.",
                      headers={"Retry-After": str(retry_after)})
