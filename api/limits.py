"""Per-tenant rate limits: fixed one-minute window counters in Redis.

Two budgets, because they protect different things:

- **requests** (``rate_limit_per_minute``): every authenticated ``/v1`` request,
  reads included, costs 1 -- long-polls, stream (re)connections, report downloads;
- **questions** (``question_limit_per_minute``): what reaches the model; ``POST
  /v1/jobs`` costs 1 and a batch of N questions costs N.

A request is refused (429 with ``Retry-After``, and not counted) when its cost would
take the minute's count past a budget -- except that a tenant that has spent
nothing yet this minute may make one request larger than the whole budget (a big
batch), which then uses up the minute; a budget of 0 refuses everything. Both fail open when Redis is unreachable or
hung: accepting work matters more than metering it. One Redis round trip per request
(a view whose question cost is fixed is charged both at once).
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TypeVar

from flask import current_app, g, request

from api.resources import Resources, resources
from shared.errors import RateLimited

logger = logging.getLogger(__name__)

V = TypeVar("V", bound=Callable)


def costs_questions(count: int) -> Callable[[V], V]:
    """Mark a view that asks ``count`` questions whatever its body says (put it below
    the route decorator): its request and its questions are counted in one go."""
    def mark(view: V) -> V:
        view.question_cost = count  # type: ignore[attr-defined]
        return view
    return mark


def limit_requests() -> None:
    """``before_request`` hook, after ``authenticate``: one request unit (and the
    view's fixed question cost, if it has one)."""
    view = current_app.view_functions.get(request.endpoint or "")
    questions = getattr(view, "question_cost", 0)
    _take(resources(), g.tenant_id, {"requests": 1, **({"questions": questions} if questions
                                                      else {})})


def check_questions(res: Resources, tenant_id: int, questions: int) -> None:
    """Count ``questions`` question units; raise RateLimited (429) past the budget."""
    _take(res, tenant_id, {"questions": questions})


def _take(res: Resources, tenant_id: int, costs: dict[str, int]) -> None:
    limits = {"requests": res.settings.rate_limit_per_minute,
              "questions": res.settings.question_limit_per_minute}
    window = int(time.time() // 60)
    keys = {budget: f"sunrise:rate:{budget}:{tenant_id}:{window}" for budget in costs}
    try:
        pipe = res.redis.pipeline(transaction=False)
        for budget, cost in costs.items():
            pipe.incrby(keys[budget], cost)
            pipe.expire(keys[budget], 120)
        used = dict(zip(costs, pipe.execute()[::2], strict=True))
        # The first spend of a minute may exceed a budget (a big batch), unless the
        # budget is 0: that one refuses everything.
        over = [b for b, cost in costs.items()
                if used[b] > limits[b] and (used[b] != cost or limits[b] == 0)]
        if not over:
            return
        refund = res.redis.pipeline(transaction=False)
        for budget, cost in costs.items():  # refused: none of it happened
            refund.decrby(keys[budget], cost)
        refund.execute()
    except Exception as exc:
        logger.warning("rate limit not checked (Redis unavailable: %s)", exc)
        return
    budget = over[0]
    retry_after = max(1, 60 - int(time.time()) % 60)
    raise RateLimited(f"Rate limit of {limits[budget]} {budget} a minute exceeded (this one "
                      f"would take {used[budget]}); retry in {retry_after} s.",
                      retry_after=retry_after)
