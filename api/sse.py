"""Server-Sent Events from a Redis event stream: resumable, heart-beating, self-closing."""
from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator

from shared.events import EventLog

logger = logging.getLogger(__name__)


def format_event(event_id: str | None, event: str, data: dict) -> str:
    head = f"id: {event_id}\n" if event_id else ""
    return f"{head}event: {event}\ndata: {json.dumps(data, default=str, separators=(',', ':'))}\n\n"


def event_stream(
    log: EventLog,
    object_id: str,
    after: str,
    *,
    heartbeat_s: float,
    max_s: float,
    terminal_from_db: Callable[[], tuple[str, dict] | None],
    on_open: Callable[[], None] = lambda: None,
    on_close: Callable[[], None] = lambda: None,
) -> Iterator[str]:
    """Yield SSE frames after stream id ``after`` until the terminal event, then stop.

    Between events it sends a comment every ``heartbeat_s``; when the stream has no
    terminal event but the database says the object ended (the stream expired, or the
    worker died between commit and publish), the terminal state comes from
    ``terminal_from_db``. It gives up after ``max_s``; the client resumes with
    Last-Event-ID.
    """
    on_open()
    try:
        yield "retry: 2000\n\n"
        deadline = time.monotonic() + max_s
        while time.monotonic() < deadline:
            events = log.read(object_id, after, block_ms=int(heartbeat_s * 1000))
            for ev in events:
                after = ev.id
                yield format_event(ev.id, ev.event, ev.data)
                if ev.is_terminal:
                    return
            if not events:
                ended = terminal_from_db()
                if ended is not None:
                    yield format_event(None, *ended)
                    return
                yield ": keep-alive\n\n"
    finally:
        on_close()
