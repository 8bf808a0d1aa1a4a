"""A tenant's access generation: a token in Redis that changes whenever a change to its
keys or users must reach every API process at once.

API processes remember key grants and users' principals for ``key_cache_s`` seconds
(``api/tenant_cache.py``). Each remembered value is stamped with the generation read
before it was loaded; a request compares the stamps with the tenant's current
generation, read in the round trip the rate limiter makes anyway (``api/limits.py``),
and loads again when they differ. So revoking a key, disabling, deleting or changing a
user (``bump`` after the change commits) takes effect on the next request everywhere.

The token is random rather than a counter: a Redis that lost its data and counts again
from the start could otherwise hand out a generation already stamped on an old value.
A tenant without a token (never changed, or Redis lost its data) is given a fresh one
by the first request that reads it, never "none": a value remembered under "none" before
a change whose bump was then lost would otherwise be confirmed again.
With Redis unreachable the stamps cannot be checked and the cache's window applies.
"""
from __future__ import annotations

import logging

from shared.unique_names import unique_name

logger = logging.getLogger(__name__)


def generation_key(tenant_id: int) -> str:
    """The Redis key holding ``tenant_id``'s generation (set by its first request or bump)."""
    return f"sunrise:access:{tenant_id}"


def new_generation() -> str:
    """A generation no process has stamped a value with (made on every request, for
    the rare tenant without one: ``unique_name`` costs no syscall)."""
    return unique_name()


def bump(client, tenant_id: int) -> None:
    """Give ``tenant_id`` a new generation; call it once the change has committed (a
    process reading the new generation must find the change in the database).

    A Redis that does not answer is logged, not raised: the change stands, and reaches
    the other processes within ``key_cache_s`` as it did before generations."""
    try:
        client.set(generation_key(tenant_id), new_generation())
    except Exception as exc:
        logger.warning("tenant %s: access generation not bumped (Redis unavailable: %s); "
                       "API processes may honour the old grants for key_cache_s", tenant_id,
                       exc)
