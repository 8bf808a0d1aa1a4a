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
hung: accepting work matters more than metering it. One Redis round trip per request,
refused or not (a Lua script; a view whose question cost is fixed is charged both at once).

The same round trip reads the tenant's access generation (``shared/access_generation.py``)
for ``api.auth.confirm_access``: a key revoked or a user changed in another process is
noticed on the next request without a round trip of its own.
"""
from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from typing import TypeVar

import redis
from flask import current_app, g, request
from redis.commands.core import Script

from api.auth import confirm_access
from api.resources import Resources, resources
from shared.access_generation import generation_key, new_generation
from shared.errors import RateLimited

logger = logging.getLogger(__name__)

V = TypeVar("V", bound=Callable)

WINDOW_TTL_S = 120  # a minute's counters outlive it, then go


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
    generation = _take(resources(), g.tenant_id, {"requests": 1, **(
        {"questions": questions} if questions else {})})
    if generation is not UNREAD:
        confirm_access(generation)


def check_questions(res: Resources, tenant_id: int, questions: int) -> None:
    """Count ``questions`` question units; raise RateLimited (429) past the budget."""
    _take(res, tenant_id, {"questions": questions})


# The generation when Redis did not answer: nothing to confirm remembered grants with.
UNREAD = object()

# KEYS: the tenant's access generation, then one counter per budget of the request.
# ARGV: the counters' expiry, then each budget's cost and limit, then a fresh token.
# Every counter takes its cost; when one goes past its limit (unless it was the minute's
# first spend and the limit is not 0: a big batch) all are given back. Returns 0, or the
# 1-based number of the first budget over, what it would have counted, and the
# generation. A missing generation (never bumped, or lost with Redis's data) becomes the
# fresh token: "none" would confirm values remembered before a change whose bump was
# lost, while a new token matches no stamp, so every process reads its grants again.
_TAKE = """
local over, count = 0, 0
local generation = redis.call('GET', KEYS[1])
if not generation then
  generation = ARGV[#ARGV]
  redis.call('SET', KEYS[1], generation)
end
for i = 2, #KEYS do
  local cost, limit = tonumber(ARGV[2 * i - 2]), tonumber(ARGV[2 * i - 1])
  local used = redis.call('INCRBY', KEYS[i], cost)
  redis.call('EXPIRE', KEYS[i], ARGV[1])
  if over == 0 and used > limit and (used ~= cost or limit == 0) then
    over, count = i - 1, used
  end
end
if over > 0 then
  for i = 2, #KEYS do redis.call('DECRBY', KEYS[i], ARGV[2 * i - 2]) end
end
return {over, count, generation}
"""


def _take(res: Resources, tenant_id: int, costs: dict[str, int]):
    """Count ``costs``; raise RateLimited past a budget. Returns the tenant's access
    generation (set to a fresh one if it had none), or ``UNREAD`` when Redis did not
    answer."""
    limits = {"requests": res.settings.rate_limit_per_minute,
              "questions": res.settings.question_limit_per_minute}
    window = int(time.time() // 60)
    args: list[int | str] = [WINDOW_TTL_S]
    for budget, cost in costs.items():
        args += [cost, limits[budget]]
    args.append(new_generation())
    try:
        over, count, generation = _take_script(res.redis)(
            keys=[generation_key(tenant_id), *(f"sunrise:rate:{budget}:{tenant_id}:{window}"
                                               for budget in costs)], args=args)
    except Exception as exc:
        logger.warning("rate limit not checked (Redis unavailable: %s)", exc)
        return UNREAD
    if not over:
        return generation
    budget = list(costs)[over - 1]
    retry_after = max(1, 60 - int(time.time()) % 60)
    raise RateLimited(f"Rate limit of {limits[budget]} {budget} a minute exceeded (this one "
                      f"would take {count}); retry in {retry_after} s.",
                      retry_after=retry_after)


@functools.cache
def _take_script(client: redis.Redis) -> Script:
    """The script on ``client`` (the process's pooled one: registered once)."""
    return client.register_script(_TAKE)
