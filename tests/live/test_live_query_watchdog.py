"""The live engines' watchdog thread: fires each armed item at its deadline, whatever
order deadlines arrive in, never after disarm, and sleeps through arms it need not see."""
from __future__ import annotations

import threading
import time

import pytest

from engine.live.query_watchdog import QueryWatchdog


@pytest.fixture
def fired():
    events: dict[str, float] = {}
    lock = threading.Lock()

    def record(item: str) -> None:
        with lock:
            events.setdefault(item, time.monotonic())

    dog = QueryWatchdog(record, "test")
    yield dog, events
    dog.close()


def _wait_for(events: dict, item: str, timeout_s: float = 5.0) -> float | None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if item in events:
            return events[item]
        time.sleep(0.005)
    return None


def test_an_earlier_deadline_armed_while_it_sleeps_on_a_later_one_fires_on_time(fired):
    dog, events = fired
    now = time.monotonic()
    dog.arm("late", now + 30)  # the thread now sleeps until this one
    time.sleep(0.05)
    dog.arm("soon", now + 0.2)
    at = _wait_for(events, "soon")
    assert at is not None and at - (now + 0.2) < 0.5
    assert "late" not in events


def test_later_deadlines_do_not_wake_it_and_still_fire(fired):
    dog, events = fired
    now = time.monotonic()
    dog.arm("first", now + 0.3)
    time.sleep(0.05)
    dog.arm("second", now + 0.5)  # later than the one it sleeps until: no wake-up
    assert dog._wake_at == pytest.approx(now + 0.3)
    assert _wait_for(events, "first") is not None
    second = _wait_for(events, "second")
    assert second is not None and second >= now + 0.5


def test_a_disarmed_item_never_fires(fired):
    dog, events = fired
    dog.arm("gone", time.monotonic() + 0.1)
    dog.disarm("gone")
    dog.arm("kept", time.monotonic() + 0.3)
    assert _wait_for(events, "kept") is not None
    assert "gone" not in events
