"""How many queries one live dataset runs at once: ``max_concurrent_queries``.

``FleetSlots`` counts across every worker through Redis: a sorted set per dataset whose
members are leases scored by when they expire (Redis's own clock, so workers' clocks
never disagree). Taking a slot drops expired leases and adds one if fewer than the limit
remain, in one Lua script; giving it back removes the lease, from a thread of this
process (``_Releases``), so the query's answer does not wait for that round trip. A lease
lasts the query's time budget plus ``LEASE_GRACE_S`` (a query never runs longer: the
engine's timeout and the watchdog end it), so a worker that dies holding a slot, or
whose give-back failed, frees it by itself.

``LocalSlots`` is the same promise within one process, for an engine opened without
Redis (the CLI, benchmarks). A query that finds every slot taken waits, polling, within
its own time budget; then ``SlotsBusy``.
"""
from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections.abc import Iterator
from typing import Any

from shared.unique_names import unique_name

logger = logging.getLogger(__name__)

LEASE_GRACE_S = 5.0
_POLL_S = (0.01, 0.2)  # first and longest pause between attempts
_KEY = "sunrise:live:slots:{}"

# KEYS[1] the set; ARGV: limit, lease member, lease length (ms). 1 if taken, else 0.
_TAKE = """
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now_ms)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now_ms + tonumber(ARGV[3]), ARGV[2])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]) * 2)
  return 1
end
return 0
"""


class SlotsBusy(Exception):
    """Every slot stayed taken for the query's whole time budget."""


class FleetSlots:
    """``limit`` slots for ``dataset`` shared by every process using ``redis``."""

    def __init__(self, redis, dataset: str, limit: int) -> None:
        self.limit = max(1, int(limit))
        self.key = _KEY.format(dataset)
        self._redis = redis
        self._take = redis.register_script(_TAKE)

    @contextlib.contextmanager
    def hold(self, deadline: float) -> Iterator[None]:
        """Hold one slot for the block; waits until ``deadline`` (``time.monotonic``),
        then raises ``SlotsBusy``. The lease ends by itself ``LEASE_GRACE_S`` after the
        deadline if it is never given back."""
        member = unique_name()
        pause = _POLL_S[0]
        while True:
            lease_ms = int((max(0.0, deadline - time.monotonic()) + LEASE_GRACE_S) * 1000)
            if self._take(keys=[self.key], args=[self.limit, member, lease_ms]):
                break
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise SlotsBusy(self.limit)
            time.sleep(min(pause, remaining))
            pause = min(pause * 2, _POLL_S[1])
        try:
            yield
        finally:
            _RELEASES.put(self._redis, self.key, member)


class _Releases:
    """Gives leases back (``ZREM``) from one daemon thread per process, in order, so a
    query's caller never waits for it. Started with the first lease given back (never
    at import), and again in a forked child, where the parent's thread does not run."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def put(self, redis: Any, key: str, member: str) -> None:
        self._queue.put((redis, key, member))
        if self._thread is None or not self._thread.is_alive():
            with self._lock:
                if self._thread is None or not self._thread.is_alive():
                    self._thread = threading.Thread(target=self._run, daemon=True,
                                                    name="live-slot-releases")
                    self._thread.start()

    def wait_idle(self, timeout_s: float = 5.0) -> bool:
        """Whether every lease queued so far was given back within ``timeout_s`` (for
        tests and shutdown)."""
        done = threading.Event()
        self._queue.put((None, None, done))
        return done.wait(timeout_s)

    def _run(self) -> None:
        while True:
            redis, key, member = self._queue.get()
            if redis is None:
                member.set()
                continue
            try:
                redis.zrem(key, member)
            except Exception as exc:  # Redis away: the lease expires by itself
                logger.warning("a live query slot could not be given back (%s); it "
                               "expires with its lease", type(exc).__name__)


_RELEASES = _Releases()


def wait_for_releases(timeout_s: float = 5.0) -> bool:
    """Whether every slot given back in this process so far has left Redis within
    ``timeout_s`` (tests, and a worker's shutdown)."""
    return _RELEASES.wait_idle(timeout_s)


class LocalSlots:
    """``limit`` slots within this process."""

    def __init__(self, limit: int) -> None:
        self.limit = max(1, int(limit))
        self._semaphore = threading.BoundedSemaphore(self.limit)

    @contextlib.contextmanager
    def hold(self, deadline: float) -> Iterator[None]:
        if not self._semaphore.acquire(timeout=max(0.0, deadline - time.monotonic())):
            raise SlotsBusy(self.limit)
        try:
            yield
        finally:
            self._semaphore.release()
