"""Answers of the clients that one event wakes together: rendered once, each out of
the others' way.

When a job ends, the event hub (``api/event_hub.py``) wakes every client waiting on it
at once, and one gevent process then answers them one after another, so a client
waits for the answers queued before its own. Two things shorten that queue:

- an event's data as clients receive it is rendered to JSON once per process
  (``presented_json``), however many SSE streams and long-polls it wakes;
- what a long-poll's connection does after its bytes are written (its request's
  close, gunicorn's access log and keep-alive read) is work no client waits for: it
  yields first (under gevent, to the ready greenlets), as an SSE stream does after
  its terminal frame (``api/sse.py``).
"""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

from cachetools import LRUCache, cached
from flask import Response, current_app

from shared.events import Event

Present = Callable[[str, dict[str, Any]], dict[str, Any]]

# Recent events' JSON, weighed in characters. Clients woken by one event ask for it
# within the same dispatch, so a small budget is enough for every job in flight.
RENDERED_BUDGET_CHARS = 4 * 1024 * 1024


def compact_json(data: dict[str, Any]) -> str:
    """An event's data as JSON text: what an SSE frame carries and, with a newline,
    what Flask's (non-debug) JSON response of the same data is."""
    return json.dumps(data, default=str, separators=(",", ":"))


# A stream id names one event of its object's stream for good, and what ``present``
# makes of it never changes: the key is (present, object id, stream id).
@cached(LRUCache(RENDERED_BUDGET_CHARS, getsizeof=len),
        key=lambda object_id, event, present: (present, object_id, event.id),
        lock=threading.Lock())
def presented_json(object_id: str, event: Event, present: Present) -> str:
    """``compact_json(present(event.event, event.data))``, rendered once per process
    for every client it is sent to."""
    return compact_json(present(event.event, event.data))


def woken_answer(data_json: str) -> Response:
    """The JSON response of ``data_json`` (as Flask would make it of the data), which
    once written lets the other woken clients be answered before its connection's
    bookkeeping."""
    response = current_app.response_class(f"{data_json}\n", mimetype=current_app.json.mimetype)
    response.call_on_close(_let_the_others_write)
    return response


def _let_the_others_write() -> None:
    time.sleep(0)
