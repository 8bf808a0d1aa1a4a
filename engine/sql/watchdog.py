"""One long-lived thread per SQL process that interrupts a query past its budget.

A ``threading.Timer`` per query started and cancelled a thread each time, which was
the SQL process's largest cost after DuckDB itself (``Thread.start`` and the
``Condition.notify`` of its cancel were the top leaf frames of the worker's profile).
Here one thread waits on a condition for the deadline of whatever query is armed:

- ``arm(cursor, budget_s)`` before a query, ``disarm()`` after it (always, in a
  ``finally``). Arming wakes the thread only when it would otherwise sleep past the
  new deadline, so back-to-back queries usually cost no thread switch at all.
- Past the deadline the thread calls ``cursor.interrupt()`` and sets ``fired``, then
  interrupts again every ``REINTERRUPT_S`` while the query stays armed: DuckDB
  clears the flag when a new statement starts, so one interrupt landing between a
  query's statements would be lost.
- Interrupting happens under the lock that ``disarm`` takes, so once ``disarm``
  returns no interrupt can reach that cursor; the next query's cursor is only
  interrupted past its own deadline. ``fired`` is the armed query's and is reset by
  the next ``arm``.

Not for concurrent queries: a SQL process runs one at a time.
"""
from __future__ import annotations

import logging
import threading
import time
from typing import Any

import duckdb

logger = logging.getLogger(__name__)

REINTERRUPT_S = 0.1


class QueryWatchdog:
    """Interrupts the armed query's cursor once its deadline has passed (see the module
    doc). The thread starts with the watchdog and ends with ``close``."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._cursor: Any = None
        self._deadline = 0.0
        # When the thread wakes by itself: None while it waits with nothing armed.
        self._wakes_at: float | None = None
        self._closed = False
        self.fired = False
        self._thread = threading.Thread(target=self._watch, name="sql-watchdog", daemon=True)
        self._thread.start()

    def arm(self, cursor: Any, budget_s: float) -> None:
        """Watch ``cursor`` for ``budget_s`` seconds from now; clears ``fired``."""
        deadline = time.monotonic() + max(0.0, budget_s)
        with self._cond:
            self._cursor, self._deadline, self.fired = cursor, deadline, False
            if self._wakes_at is None or self._wakes_at > deadline:
                self._cond.notify()

    def disarm(self) -> None:
        """Stop watching; when this returns, the cursor is never interrupted again."""
        with self._cond:
            self._cursor = None

    def check(self) -> None:
        """Raise ``duckdb.InterruptException`` if the armed query's budget is spent."""
        if self.fired:
            raise duckdb.InterruptException("Interrupted by the query time limit")

    def close(self) -> None:
        """End the thread (idempotent); an armed query is no longer watched."""
        with self._cond:
            self._closed, self._cursor = True, None
            self._cond.notify()
        self._thread.join(5)

    def _watch(self) -> None:
        with self._cond:
            while not self._closed:
                if self._cursor is None:
                    self._wakes_at = None
                    self._cond.wait()
                    continue
                left = self._deadline - time.monotonic()
                if left > 0:
                    self._wakes_at = self._deadline
                    self._cond.wait(left)
                    continue
                self.fired = True
                try:
                    self._cursor.interrupt()
                except Exception:  # the cursor may be mid-close
                    logger.debug("interrupt failed", exc_info=True)
                self._wakes_at = time.monotonic() + REINTERRUPT_S
                self._cond.wait(REINTERRUPT_S)
