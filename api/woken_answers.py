"""Answers of the clients that one event wakes together: each out of the others' way.

When a job ends, the event hub (``api/event_hub.py``) wakes every client waiting on it
at once, and one gevent process then answers them one after another, so a client
waits for the answers queued before its own. What a client's connection does after
its bytes are written (its request's close, gunicorn's access log and keep-alive read)
is work no client waits for: it yields first (under gevent, to the ready greenlets),
as an SSE stream does after its terminal frame (``api/sse.py``).
"""
from __future__ import annotations

import time
from typing import Any

from flask import Response, current_app


def woken_answer(data: dict[str, Any]) -> Response:
    """``data`` as the JSON response Flask would make of it, which once written lets
    the other woken clients be answered before its connection's bookkeeping."""
    response = current_app.json.response(data)
    response.call_on_close(_let_the_others_write)
    return response


def _let_the_others_write() -> None:
    time.sleep(0)
