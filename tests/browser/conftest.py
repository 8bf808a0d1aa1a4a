"""Fixtures for the console's browser tests: the real API over real HTTP, and headless Chromium.

The API is the real app under gunicorn with gevent workers (``tests.utils.live_api``,
127.0.0.1, an ephemeral port), backed by the session's MariaDB, Redis, the in-process
Celery worker and the offline model. The browser is Debian's ``/usr/bin/chromium``
driven by Playwright's Python client; .ci/run installs it. Nothing is skipped: a
missing browser fails the run. Screenshots, and a failing test's API log, are kept
under test-artifacts/browser/.
"""
from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.utils.live_api import LiveApi

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--no-first-run", "--disable-component-update", "--disable-sync",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "browser"
# Generous, bounded waits: the machine is small and shared with other test runs.
UI_TIMEOUT_MS = 60_000


@pytest.fixture(scope="session")
def live_api(base_settings, celery_worker) -> Iterator[LiveApi]:
    """The real API (gunicorn + gevent, a subprocess on 127.0.0.1) with the real worker
    consuming what it enqueues."""
    with LiveApi(base_settings) as api:
        yield api


@pytest.fixture(scope="session")
def strict_live_api(base_settings, celery_worker) -> Iterator[LiveApi]:
    """A second API whose question budget refuses every job submission (429); reads
    (the console's sidebar loads) are not limited, so the 429 shown is the Ask's."""
    with LiveApi(base_settings, question_limit_per_minute=0) as api:
        yield api


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (.ci/run does)")
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS,
                                      headless=True)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, request) -> Iterator[object]:
    """A fresh browser context (empty localStorage) and page; console errors are collected.

    ``page.console_errors`` lists uncaught JavaScript errors and error-level console
    messages. A failing test leaves a ``FAILED-<test>.png`` screenshot.
    """
    context = browser.new_context(viewport={"width": 1360, "height": 900}, locale="en-US")
    context.set_default_timeout(UI_TIMEOUT_MS)
    pg = context.new_page()
    pg.console_errors = []
    pg.on("pageerror", lambda exc: pg.console_errors.append(f"pageerror: {exc}"))
    pg.on("console", lambda msg: _collect_console_error(pg, msg))
    yield pg
    failed = getattr(request.node, "rep_call", None)
    if failed is not None and failed.failed:
        save_screenshot(pg, f"FAILED-{request.node.name}")
        _save_api_logs(request)
    context.close()


def _save_api_logs(request) -> None:
    """Beside a failing test's screenshot, what its API servers printed so far (their
    log files go when the session's servers stop): a 500 is explained there."""
    for name in ("live_api", "strict_live_api"):
        if name in request.fixturenames:
            api = request.getfixturevalue(name)
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            (ARTIFACTS / f"FAILED-{request.node.name}-{name}.log").write_text(api.log_text())


def _collect_console_error(pg, msg) -> None:
    # Chromium logs every HTTP error response ("Failed to load resource"); the tests
    # check how the page shows those, so only script errors count here.
    if msg.type == "error" and not msg.text.startswith("Failed to load resource"):
        pg.console_errors.append(msg.text)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    # Lets the page fixture screenshot a failing test before its context closes.
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item.rep_call = report


def save_screenshot(pg, name: str) -> Path:
    """Save a full-page PNG under test-artifacts/browser/ and return its path."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    pg.screenshot(path=str(path), full_page=True)
    return path


@pytest.fixture
def console_key(base_settings) -> str:
    """A fresh tenant's API key (each test sees only its own conversations)."""
    from shared.db import session_scope
    from shared.keys import create_key

    with session_scope(base_settings.database_url) as s:
        return create_key(s, f"browser-{uuid.uuid4().hex[:10]}")
