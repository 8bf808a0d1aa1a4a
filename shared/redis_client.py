"""Redis client factory: one pooled client per URL per process, created on first use."""
from __future__ import annotations

import functools

import redis


@functools.cache
def redis_for(url: str) -> redis.Redis:
    return redis.Redis.from_url(
        url, decode_responses=True, socket_connect_timeout=2, socket_timeout=None,
        health_check_interval=30,
    )
