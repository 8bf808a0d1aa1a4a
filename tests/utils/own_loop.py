"""Running a coroutine from a test, whatever already runs on the test's thread."""
from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_in_own_loop(coro: Coroutine[Any, Any, T], timeout: float = 300) -> T:
    """``asyncio.run(coro)`` on a thread of its own: sync Playwright (the browser tests)
    leaves an event loop running on the main thread, where ``asyncio.run`` refuses to
    start, so a test run after them would fail for the order alone."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result(timeout=timeout)
