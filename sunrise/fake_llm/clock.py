"""The simulated clock that prompt-cache TTLs and batch processing run on.

It follows the real monotonic clock plus an offset that only grows, so tests
can expire a 5-minute cache entry with `POST /_control/clock {"advance_s": 301}`
instead of sleeping.
"""

from __future__ import annotations

import time
from collections.abc import Callable


class SimClock:
    """Monotonic seconds, advanced on demand; `source` is injectable for tests."""

    def __init__(self, source: Callable[[], float] = time.monotonic):
        self._source = source
        self._offset = 0.0

    def now(self) -> float:
        return self._source() + self._offset

    def advance(self, seconds: float) -> float:
        """Move simulated time forward (never back); returns the new `now()`."""
        if seconds < 0:
            raise ValueError("the clock only moves forward")
        self._offset += seconds
        return self.now()
