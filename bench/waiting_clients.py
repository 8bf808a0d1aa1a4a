"""Figure 4's waiting clients: SSE subscribers and long-pollers of one object, through
``sunrise.client.SunriseClient``, each noting when it connected and when it had the
terminal event (``time.time()`` after parsing). Used for the API (bench/completion_notify.py)
and for its floor (bench/notify_floor.py), so both are timed the same way."""
from __future__ import annotations

import threading
import time
from collections.abc import Callable

from sunrise.client import TERMINAL, SunriseClient

# Long-pollers give no sign that they are waiting; this is ample for them to arrive.
POLLERS_SETTLE_S = 0.3

Arrival = tuple[str, float, float]  # (kind, connected at, received at)


def wait_for_end(base_url: str, key: str, job_id: str, streams: int, pollers: int,
                 release: Callable[[], None]) -> list[Arrival]:
    """Connect ``streams`` SSE subscribers and ``pollers`` long-pollers to ``job_id``,
    call ``release`` once the subscribers have their ``queued`` event and the pollers
    have had time to arrive, and return each client's arrival of the terminal event."""
    arrivals: list[Arrival] = []
    lock = threading.Lock()
    subscribed = threading.Semaphore(0)

    def subscriber() -> None:
        with SunriseClient(base_url, key) as own:
            connected = time.time()
            for event in own.stream(job_id, timeout=120):
                if event.event == "queued":
                    subscribed.release()
                elif event.event in TERMINAL:
                    with lock:
                        arrivals.append(("sse", connected, time.time()))

    def poller() -> None:
        with SunriseClient(base_url, key) as own:
            connected = time.time()
            job = own.get(job_id, wait=30)
            received = time.time()
            if job["status"] in TERMINAL:
                with lock:
                    arrivals.append(("long_poll", connected, received))

    threads = [threading.Thread(target=subscriber) for _ in range(streams)]
    threads += [threading.Thread(target=poller) for _ in range(pollers)]
    for t in threads:
        t.start()
    for _ in range(streams):
        subscribed.acquire(timeout=30)
    time.sleep(POLLERS_SETTLE_S)
    release()
    for t in threads:
        t.join(150)
    return arrivals


def delays_after(arrivals: list[Arrival],
                 committed: float) -> tuple[dict[str, list[float]], int]:
    """Each kind's delays after ``committed`` (ms), and how many clients connected after
    it (their samples are discarded: they did not wait for the end)."""
    got: dict[str, list[float]] = {"sse": [], "long_poll": []}
    late = 0
    for kind, connected, received in arrivals:
        if connected > committed:
            late += 1
        else:
            got[kind].append((received - committed) * 1000)
    return got, late
