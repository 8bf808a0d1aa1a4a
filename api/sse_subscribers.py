"""Open SSE streams, counted across every API process in one Redis sorted set.

gunicorn runs several API processes (and deployments run several hosts), so an
in-process gauge would show whichever process answered the scrape. Each open stream
is a member scored with the time it must have ended by (streams give up after
``max_s``), so a process that dies with streams open stops being counted once that
time passes instead of inflating the gauge forever.
"""
from __future__ import annotations

import logging
import os
import socket
import time
import uuid
from collections.abc import Callable

import redis

logger = logging.getLogger(__name__)

SUBSCRIBERS_KEY = "sunrise:sse:subscribers"
# Room for a stream's last heartbeat wait and the client's close after ``max_s``.
GRACE_S = 60.0


def subscriber_callbacks(client: redis.Redis, max_s: float,
                         *, kind: str = "job") -> tuple[Callable[[], None], Callable[[], None]]:
    """``(on_open, on_close)`` for one SSE stream that lasts at most ``max_s`` seconds.

    Neither callback raises: a Redis hiccup costs an accurate gauge, never the stream.
    """
    member = f"{kind}:{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex}"

    def on_open() -> None:
        try:
            client.zadd(SUBSCRIBERS_KEY, {member: time.time() + max_s + GRACE_S})
        except redis.RedisError as exc:
            logger.warning("SSE subscriber not counted: %s", exc)

    def on_close() -> None:
        try:
            client.zrem(SUBSCRIBERS_KEY, member)
        except redis.RedisError as exc:
            logger.warning("SSE subscriber not uncounted (it expires by itself): %s", exc)

    return on_open, on_close


def count_subscribers(client: redis.Redis) -> int:
    """Open SSE streams right now, after dropping those past their end time.

    Raises ``redis.RedisError`` when Redis does not answer.
    """
    pipe = client.pipeline(transaction=False)
    pipe.zremrangebyscore(SUBSCRIBERS_KEY, "-inf", time.time())
    pipe.zcard(SUBSCRIBERS_KEY)
    _, count = pipe.execute()
    return int(count)
