"""Redis client factory: one pooled client per URL per process, created on first use."""
from __future__ import annotations

import functools

import redis

# Enough for a worker's threads or a gevent API worker's bursts of short commands.
POOL_SIZE = 256
POOL_WAIT_S = 10
SOCKET_TIMEOUT_S = 30


@functools.cache
def redis_for(url: str) -> redis.Redis:
    # A blocking pool: a burst of greenlets or threads waits for a free connection
    # instead of failing with "Too many connections" (redis-py's default pool raises).
    pool = redis.BlockingConnectionPool.from_url(
        url, max_connections=POOL_SIZE, timeout=POOL_WAIT_S, decode_responses=True,
        # Longer than any blocking read on this pool (SSE heartbeats, 15 s), short enough
        # that a hung (not stopped) Redis cannot hold a request forever.
        socket_connect_timeout=2, socket_timeout=SOCKET_TIMEOUT_S, health_check_interval=30,
    )
    return redis.Redis(connection_pool=pool)


def dedicated_redis(url: str) -> redis.Redis:
    """A new client on ONE connection of its own, for a long blocking read that must not
    take a connection from the shared pool. Not thread-safe: give it one user."""
    return redis.Redis.from_url(
        url, decode_responses=True, socket_connect_timeout=2, socket_timeout=None,
        socket_keepalive=True, single_connection_client=True,
    )
