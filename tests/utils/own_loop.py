"""Run a coroutine to completion on an event loop of its own, in a thread of its own.

Playwright's sync API (the browser tests' session-scoped fixture) keeps an asyncio loop
registered as running in the main thread for the rest of the session, so a later
``asyncio.run`` there raises "cannot be called from a running event loop". Tests that
drive async clients (the MCP SDK's) run them through ``run_coroutine`` instead.
"""
from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


def run_coroutine(coro: Coroutine[Any, Any, T], timeout: float = 600.0) -> T:
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="own-loop") as pool:
        return pool.submit(asyncio.run, coro).result(timeout=timeout)
