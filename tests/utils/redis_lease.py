"""Redis database numbers leased to one test session, so that concurrent runs on one
machine (developers, CI) never flush or consume each other's keys."""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import redis

LEASE_PREFIX = "sunrise:test-db-lease:"


@contextmanager
def leased_database(host: str = "redis://127.0.0.1:6379") -> Iterator[str]:
    """The URL of a database number (1-15) on ``host`` that this process alone holds,
    empty on entry and flushed again on exit. The lease (a key in database 0) expires
    after four hours if the session dies without releasing it. Ends the pytest run
    (exit code 3) when other runs hold all fifteen."""
    holder = redis.Redis.from_url(f"{host}/0")
    for number in range(1, 16):
        lease = f"{LEASE_PREFIX}{number}"
        if holder.set(lease, os.getpid(), nx=True, ex=4 * 3600):
            break
    else:
        pytest.exit("all Redis test databases 1-15 are leased by other test runs", returncode=3)
    url = f"{host}/{number}"
    redis.Redis.from_url(url).flushdb()
    try:
        yield url
    finally:
        redis.Redis.from_url(url).flushdb()
        holder.delete(lease)
