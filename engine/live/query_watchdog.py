"""One thread per live engine that stops queries past their deadline.

A ``threading.Timer`` per query started a thread each time (about a millisecond on a
busy host, as much as a round trip to the source). Here one thread, started with the
first query watched (never at import), sleeps until the earliest deadline of the
queries armed and calls ``on_overrun(item)`` for each one past it, outside its lock.
``disarm`` before the item's query ends; ``close`` ends the thread. Arming wakes the
thread only when the new deadline comes before the one it sleeps until: queries of one
budget arrive in deadline order, so the thread wakes about once per budget, not once per
query (a wake-up per query was a thread switch on the query's path).
"""
from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import Any


class QueryWatchdog:
    def __init__(self, on_overrun: Callable[[Any], None], name: str) -> None:
        self._on_overrun = on_overrun
        self._name = name
        self._cond = threading.Condition()
        self._deadlines: dict[int, tuple[float, Any]] = {}
        self._thread: threading.Thread | None = None
        self._closed = False
        self._wake_at = math.inf  # when the thread wakes next by itself (under _cond)

    def arm(self, item: Any, deadline: float) -> None:
        """Call ``on_overrun(item)`` once ``time.monotonic()`` passes ``deadline``."""
        with self._cond:
            if self._closed:
                return
            self._deadlines[id(item)] = (deadline, item)
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, daemon=True,
                                                name=f"live-watchdog-{self._name}")
                self._thread.start()
            if deadline < self._wake_at:
                self._cond.notify()

    def disarm(self, item: Any) -> None:
        with self._cond:
            self._deadlines.pop(id(item), None)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._deadlines.clear()
            self._cond.notify()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(5)

    def _watch(self) -> None:
        while True:
            with self._cond:
                if self._closed:
                    return
                now = time.monotonic()
                due = [item for deadline, item in self._deadlines.values() if deadline <= now]
                for item in due:
                    self._deadlines.pop(id(item), None)
                if not due:
                    self._wake_at = min((d for d, _ in self._deadlines.values()),
                                        default=math.inf)
                    self._cond.wait(None if self._wake_at == math.inf else self._wake_at - now)
                    self._wake_at = -math.inf  # awake: it reads the deadlines before it sleeps
                    continue
            for item in due:  # outside the lock: stopping a query takes round trips
                threading.Thread(target=self._on_overrun, args=(item,), daemon=True,
                                 name=f"live-stop-{self._name}").start()
