"""Which tenant an API key belongs to, remembered in this process for a few seconds.

Every ``/v1`` request authenticates, and reading the key's owner from the database
each time cost a pooled connection, a transaction and a SELECT per request. A key
found valid is remembered for ``key_cache_s`` seconds (``SUNRISE_KEY_CACHE_S``), so
**a revoked key keeps working for at most that long** in each API process that used
it just before. Unknown and revoked keys are never remembered: a new key works at
once, and a wrong key costs a lookup every time. The cache is keyed by the
key's SHA-256, never by the key itself.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any

from cachetools import TTLCache

# Keys used within one window; beyond it the least recently used are forgotten first.
MAX_KEYS = 10_000


class TenantCache:
    """``digest → tenant id`` for ``ttl_s`` seconds; ``ttl_s`` 0 remembers nothing."""

    def __init__(self, ttl_s: float, maxsize: int = MAX_KEYS):
        self._cache: TTLCache[Hashable, Any] | None = TTLCache(maxsize, ttl_s) if ttl_s > 0 else None
        self._lock = threading.Lock()

    def tenant_id(self, digest: str, load: Callable[[], int | None]) -> int | None:
        """The remembered tenant of ``digest``, else ``load()`` (remembered unless None)."""
        return self.value(digest, load)

    def value(self, digest: Hashable, load: Callable[[], Any]) -> Any:
        """The remembered value of ``digest`` (a key grant, a user's principal: anything
        the window may serve stale), else ``load()`` (remembered unless None)."""
        if self._cache is None:
            return load()
        with self._lock:
            tenant_id = self._cache.get(digest)
        if tenant_id is None:
            tenant_id = load()
            if tenant_id is not None:
                with self._lock:
                    self._cache[digest] = tenant_id
        return tenant_id
