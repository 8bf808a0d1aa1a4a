"""Server-Sent Events from a Redis event stream: resumable, heart-beating, self-closing.

The Redis stream entry ids are the SSE ``id:`` values, so a reconnecting client's
``Last-Event-ID`` names exactly where to go on: nothing is lost and nothing repeats.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from typing import Protocol

import redis
from flask import Response, request

from api.event_hub import EventHub, HubUnavailable
from api.request_parsing import parse_query
from api.schemas.common import EventsQuery
from api.woken_answers import compact_json, presented_json
from shared.errors import BadRequest
from shared.events import Event, EventLog, check_stream_id, id_order

logger = logging.getLogger(__name__)

START = "0-0"
# Sent to every proxy between a stream's events: nginx does not buffer the body.
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
HEARTBEAT = ": keep-alive\n\n"


def resume_point(header: str | None, query: str | None) -> str:
    """The stream id to resume after: the ``Last-Event-ID`` header (what EventSource
    sends when it reconnects) wins over ``?last_event_id=`` (what a page can set).

    Raises BadRequest for an id this API never sends (Redis could not read from it).
    """
    value = (header or "").strip() or (query or "").strip() or START
    try:
        return check_stream_id(value)
    except ValueError:
        raise BadRequest(f"Last-Event-ID {value[:60]!r} is not an event id this API sent.") from None


def events_response(frames_after: Callable[[str], Iterator[str] | None]) -> Response:
    """An events endpoint's answer: ``frames_after(resume point)`` as a stream, or 204
    (which stops EventSource reconnecting) when it is None: the client has the end."""
    query = parse_query(EventsQuery)
    frames = frames_after(resume_point(request.headers.get("Last-Event-ID"),
                                       query.last_event_id))
    if frames is None:
        return Response(status=204)
    return Response(frames, mimetype="text/event-stream", headers=SSE_HEADERS)


def already_delivered(log: EventLog, object_id: str, after: str) -> bool:
    """True when the terminal event is in the stream at or before ``after``: a client
    resuming from there has seen the end already."""
    if after == START:
        return False
    last = log.last(object_id)
    return last is not None and last.is_terminal and id_order(last.id) <= id_order(after)


def stored_end(event: str, data: dict) -> Iterator[str]:
    """The frames of an ended object whose stream Redis cannot give: its stored terminal
    event, without an id (there is none to resume from)."""
    return iter([format_event(None, event, data)])


def format_event(event_id: str | None, event: str, data: dict) -> str:
    return format_frame(event_id, event, compact_json(data))


def format_frame(event_id: str | None, event: str, data_json: str) -> str:
    head = f"id: {event_id}\n" if event_id else ""
    return f"{head}event: {event}\ndata: {data_json}\n\n"


class EventSource(Protocol):
    """What a stream waits on: ``get`` gives the next events (none after ``timeout``
    seconds of silence), ``close`` lets go of them."""

    def get(self, timeout: float) -> list[Event]: ...

    def close(self) -> None: ...


class DirectRead:
    """Reads the stream without waiting in Redis (the pooled client only sends short
    commands), then waits here. What ``event_stream`` uses when it is given no hub: an
    ended object's stream, complete but for a terminal event the database may add."""

    def __init__(self, log: EventLog, object_id: str, after: str):
        self.log, self.object_id, self.after = log, object_id, after

    def get(self, timeout: float) -> list[Event]:
        events = self.log.read(self.object_id, self.after)
        if events:
            self.after = events[-1].id
        else:
            time.sleep(timeout)
        return events

    def close(self) -> None:
        pass


class NoEvents:
    """What a stream waits on when Redis cannot be reached: nothing but time, while the
    stream's database rechecks find the end."""

    def get(self, timeout: float) -> list[Event]:
        time.sleep(timeout)
        return []

    def close(self) -> None:
        pass


def event_stream(
    log: EventLog,
    object_id: str,
    after: str,
    *,
    heartbeat_s: float,
    max_s: float,
    terminal_from_db: Callable[[], tuple[str, dict] | None],
    recheck_s: float | None = None,
    hub: EventHub | None = None,
    on_open: Callable[[], None] = lambda: None,
    on_close: Callable[[], None] = lambda: None,
    present: Callable[[str, dict], dict] = lambda event, data: data,
) -> Iterator[str]:
    """Yield SSE frames after stream id ``after`` until the terminal event, then stop.

    It waits through ``hub`` (shared by every client of the process) when given, else
    in a blocking read of its own. Between events it sends a comment every
    ``heartbeat_s`` so that proxies keep the connection open. Every ``recheck_s``
    (default: every heartbeat) of silence it asks ``terminal_from_db`` whether the
    object ended without its terminal event reaching the stream (a worker died between
    commit and publish, the stream expired); if so it publishes that terminal event
    itself — the log's SET NX guard still lets only one through — so that it arrives
    with an id like any other. If even that cannot reach the stream (Redis trouble),
    the database's version is sent without an id. Gives up after ``max_s``; the client
    resumes with Last-Event-ID. ``present(event, data)`` is each event's data as sent
    (the API adds the links the worker's events do not carry); it is rendered once
    per event for all the streams it is sent on (``presented_json``).
    """
    recheck_s = heartbeat_s if recheck_s is None else recheck_s
    on_open()
    source: EventSource | None = None
    try:
        source, recheck_s = _open_source(log, object_id, after, hub, recheck_s, heartbeat_s)
        yield "retry: 2000\n\n"
        now = time.monotonic()
        fallback = _TerminalFromDb(log, object_id, terminal_from_db, recheck_s, now + recheck_s)
        yield from _follow(source, fallback, object_id, deadline=now + max_s,
                           heartbeat_s=heartbeat_s, present=present)
    finally:
        # Other streams woken by the same event write theirs before this one's
        # bookkeeping (under gevent, a yield to the ready greenlets).
        time.sleep(0)
        if source is not None:
            source.close()
        on_close()


def _open_source(log: EventLog, object_id: str, after: str, hub: EventHub | None,
                 recheck_s: float, heartbeat_s: float) -> tuple[EventSource, float]:
    """What the stream waits on, and how often it rechecks the database: the hub's
    subscription (or a :class:`DirectRead` without a hub), which first gives the events
    stored after ``after`` and then the live ones; :class:`NoEvents` when Redis cannot
    be reached, rechecking every heartbeat since the database is then all it has."""
    try:
        return (hub.subscribe(object_id, after) if hub else DirectRead(log, object_id, after),
                recheck_s)
    except redis.RedisError as exc:
        logger.warning("%s %s: stream follows the database (Redis: %s)", log.kind,
                       object_id, exc)
        return NoEvents(), heartbeat_s


def _follow(source: EventSource, fallback: _TerminalFromDb, object_id: str, *, deadline: float,
            heartbeat_s: float, present: Callable[[str, dict], dict]) -> Iterator[str]:
    """The wait loop: the frames of what ``source`` gives until the terminal event; a
    heartbeat after each ``heartbeat_s`` of silence, then the database's recheck when
    it is due. Stops at the terminal event (the stream's or the database's) or at
    ``deadline`` (``time.monotonic()``)."""
    while time.monotonic() < deadline:
        try:
            events = source.get(timeout=heartbeat_s)
        except (HubUnavailable, redis.RedisError):
            events = []  # the hub resumes from where this stream stands
        if events:
            frames, ended = _event_frames(object_id, events, present)
            yield frames
            if ended:
                return
            continue
        yield HEARTBEAT
        if fallback.due() and (last := fallback.check()) is not None:
            yield last
            return


def _event_frames(object_id: str, events: list[Event],
                  present: Callable[[str, dict], dict]) -> tuple[str, bool]:
    """``events`` as one write, up to and including a terminal event, and whether there
    was one (the stream ends after it)."""
    # What arrived together leaves in one write (one send, one chunk): the terminal
    # event usually comes with the events held back before it.
    end = next((i for i, ev in enumerate(events) if ev.is_terminal), None)
    sent = events if end is None else events[:end + 1]
    return ("".join(format_frame(ev.id, ev.event, presented_json(object_id, ev, present))
                    for ev in sent), end is not None)


class _TerminalFromDb:
    """A stream's fallback for an object that ended without its terminal event reaching
    the stream: asks the database (``terminal_from_db``) every ``recheck_s`` of
    silence; publishes what it finds once (the log's SET NX guard lets only one
    through), so it arrives with an id; if that fails or still nothing arrives by the
    next silence, the stored terminal event is the stream's last frame, without an id."""

    def __init__(self, log: EventLog, object_id: str,
                 terminal_from_db: Callable[[], tuple[str, dict] | None],
                 recheck_s: float, first_check: float):
        self.log, self.object_id, self.terminal_from_db = log, object_id, terminal_from_db
        self.recheck_s, self.next_check, self.repaired = recheck_s, first_check, False

    def due(self) -> bool:
        """Whether to ask now: ``recheck_s`` has passed, or a published end is awaited."""
        return time.monotonic() >= self.next_check or self.repaired

    def check(self) -> str | None:
        """Ask the database; the final frame to send, or None to go on waiting."""
        self.next_check = time.monotonic() + self.recheck_s
        ended = self.terminal_from_db()
        if ended is None:
            return None
        if not self.repaired:
            self.repaired = True
            try:
                self.log.publish(self.object_id, *ended)
                return None
            except redis.RedisError as exc:
                logger.warning("%s %s: cannot publish its terminal event: %s",
                               self.log.kind, self.object_id, exc)
        logger.warning("%s %s ended but its terminal event is not in the stream; "
                       "sending the stored state", self.log.kind, self.object_id)
        return format_event(None, *ended)
