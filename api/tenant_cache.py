"""Key grants and users' principals, remembered in this process for a few seconds.

Every ``/v1`` request authenticates, and reading the key's owner from the database
each time cost a pooled connection, a transaction and a SELECT per request. A key
found valid is remembered for ``key_cache_s`` seconds (``SUNRISE_KEY_CACHE_S``).
Unknown and revoked keys are never remembered: a new key works at once, and a wrong
key costs a lookup every time. The cache is keyed by the key's SHA-256, never by the
key itself.

Each value is stamped with the tenant's access generation it was loaded under
(``shared/access_generation.py``): a lookup given the current generation treats a
value stamped otherwise as absent, so a revoked key or a changed user is read again on
the next request. A lookup without one (``ANY``) takes any stamp; that is how the
window bounds staleness while Redis cannot be asked.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any

from cachetools import TTLCache

# Keys used within one window; beyond it the least recently used are forgotten first.
MAX_KEYS = 10_000
# "No generation to check": a remembered value serves whatever its stamp.
ANY = object()


class TenantCache:
    """``digest → (stamp, value)`` for ``ttl_s`` seconds; ``ttl_s`` 0 remembers nothing."""

    def __init__(self, ttl_s: float, maxsize: int = MAX_KEYS):
        self._cache: TTLCache[Hashable, Any] | None = TTLCache(maxsize, ttl_s) if ttl_s > 0 else None
        self._lock = threading.Lock()

    def tenant_id(self, digest: str, load: Callable[[], int | None]) -> int | None:
        """The remembered tenant of ``digest``, else ``load()`` (remembered unless None)."""
        return self.value(digest, load)

    def value(self, digest: Hashable, load: Callable[[], Any]) -> Any:
        """The remembered value of ``digest``, whatever its stamp, else ``load()``."""
        return self.stamped(digest, load)[1]

    def stamped(self, digest: Hashable, load: Callable[[], Any],
                generation: Any = ANY) -> tuple[Any, Any]:
        """``(stamp, value)``: the remembered value of ``digest`` if its stamp is
        ``generation`` (or ``generation`` is ``ANY``), else ``load()``, remembered unless
        None and stamped ``generation`` (None, "unchecked", under ``ANY``).

        Read ``generation`` before calling: a change committed after the read bumps the
        generation again, so the value loaded now is not trusted beyond this request.
        Without a cache every value is loaded, and stamped ``ANY``."""
        if self._cache is None:
            return ANY, load()
        with self._lock:
            remembered = self._cache.get(digest)
        if remembered is not None and generation in (ANY, remembered[0]):
            return remembered
        stamp = None if generation is ANY else generation
        value = load()
        if value is not None:
            with self._lock:
                self._cache[digest] = (stamp, value)
        return stamp, value
