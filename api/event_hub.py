"""One Redis reader per API process that wakes every client waiting for events.

Without it each SSE subscriber and each long-poller would hold a Redis connection in a
blocking XREAD of its own; redis-py caps a pool at 100 connections and Redis caps
clients at 10 000. Here one reader thread (a greenlet under gunicorn's gevent workers)
blocks in a single XREAD over the streams of every watched object and hands new events
to the subscriptions waiting for them: a waiting client costs a queue, not a
connection or a thread.

A subscription carries the stream id it has seen (``after``). The reader reads each
stream from the oldest position its subscriptions need and gives each only what is
newer than its own, so subscribing late, or many times to one object, loses and
repeats nothing. When a new subscription needs a stream (or an older position) that
the blocked read does not cover, it appends to the hub's own control stream, which
every read includes, and the read returns at once.
"""
from __future__ import annotations

import logging
import os
import queue
import threading
import time
import uuid
from collections.abc import Callable
from typing import Self

import redis

from shared.events import Event, EventLog, check_stream_id, id_order, stream_key

logger = logging.getLogger(__name__)


# How long the reader's XREAD blocks; the reader's connection times out a little later.
BLOCK_MS = 10_000


class HubUnavailable(Exception):
    """The hub cannot read Redis right now; subscriptions stay and resume afterwards."""


class Subscription:
    """Events of one object after ``after``, as the hub delivers them. Close it (or use
    it as a context manager) when done; it holds nothing else."""

    def __init__(self, hub: EventHub, object_id: str, after: str):
        self.hub = hub
        self.object_id = object_id
        self.after = after  # advanced by the hub, under its lock
        self._inbox: queue.Queue = queue.Queue()

    def get(self, timeout: float) -> list[Event]:
        """The events delivered since the last call, waiting up to ``timeout`` s for the
        first; ``[]`` when none came. Raises HubUnavailable when Redis failed meanwhile
        and nothing arrived."""
        try:
            items = [self._inbox.get(timeout=max(0.0, timeout))]
        except queue.Empty:
            return []
        while not self._inbox.empty():
            items.append(self._inbox.get_nowait())
        events = [event for item in items if isinstance(item, list) for event in item]
        if not events and items:
            raise items[-1]
        return events

    def deliver(self, item: list[Event] | HubUnavailable) -> None:
        """Called by the hub (under its lock): never blocks."""
        self._inbox.put(item)

    def close(self) -> None:
        self.hub.unsubscribe(self)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class EventHub:
    """Fans one blocking read out to any number of subscriptions of one event log.

    ``connect`` builds the reader's own Redis client (one connection); wake-ups go
    through ``log``'s pooled client. The reader starts on the first subscription and
    stops after ``idle_s`` without any.
    """

    def __init__(self, log: EventLog, connect: Callable[[], redis.Redis], *,
                 block_ms: int = BLOCK_MS, count: int = 500, idle_s: float = 30.0):
        self.log = log
        self._connect = connect
        self.block_ms, self.count, self.idle_s = block_ms, count, idle_s
        self._control = f"_hub-{uuid.uuid4().hex}"  # an object id of the log's kind
        self._reset()

    def _reset(self) -> None:
        # Also called in a forked child: the parent's reader thread does not exist there.
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._subs: dict[str, set[Subscription]] = {}
        self._reader: threading.Thread | None = None
        self._reading: dict[str, str] | None = None  # positions of the read in flight
        self._wake = threading.Event()
        self._control_after = "0-0"

    def subscribe(self, object_id: str, after: str = "0-0") -> Subscription:
        """Start receiving the object's events after stream id ``after``.

        Raises ValueError for a position Redis could not read (checked here, since one
        such position in the shared read would fail it for every subscription), and
        redis.RedisError when the read in flight cannot be interrupted.
        """
        check_stream_id(after)
        if os.getpid() != self._pid:
            self._reset()
        sub = Subscription(self, object_id, after)
        with self._lock:
            self._subs.setdefault(object_id, set()).add(sub)
            reading = self._reading
            interrupt = reading is not None and (
                object_id not in reading or id_order(after) < id_order(reading[object_id]))
            if self._reader is None or not self._reader.is_alive():
                self._reader = threading.Thread(target=self._run, name="sunrise-event-hub",
                                                 daemon=True)
                self._reader.start()
            self._wake.set()
        if interrupt:
            try:
                self._interrupt()
            except redis.RedisError:
                self.unsubscribe(sub)
                raise
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        with self._lock:
            subs = self._subs.get(sub.object_id)
            if subs is not None:
                subs.discard(sub)
                if not subs:
                    del self._subs[sub.object_id]
            # The last one out cuts the blocked read short, so an idle reader stops
            # after idle_s rather than after a full block_ms on streams nobody watches.
            interrupt = not self._subs and self._reading is not None
        if interrupt:
            try:
                self._interrupt()
            except redis.RedisError:
                logger.debug("event hub: could not interrupt the idle read", exc_info=True)

    def watching(self) -> int:
        """How many subscriptions are open (for tests and metrics)."""
        with self._lock:
            return sum(len(subs) for subs in self._subs.values())

    def _interrupt(self) -> None:
        key = stream_key(self.log.kind, self._control)
        pipe = self.log.client.pipeline(transaction=False)
        pipe.xadd(key, {"event": "wake"}, maxlen=16)
        pipe.expire(key, 3600)
        pipe.execute()

    # -- the reader -------------------------------------------------------------------

    def _next_positions(self) -> dict[str, str] | None:
        """Positions for the next read (None: stop, nobody listened for ``idle_s``)."""
        while True:
            with self._lock:
                positions = {oid: min((s.after for s in subs), key=id_order)
                             for oid, subs in self._subs.items()}
                if positions:
                    # Set in the same critical section as the positions were taken, so a
                    # subscriber either is in them or sees that it must interrupt.
                    self._reading = positions
                    return {**positions, self._control: self._control_after}
                self._wake.clear()
            if not self._wake.wait(self.idle_s):
                with self._lock:
                    if not self._subs:
                        self._reader = None
                        return None

    def _run(self) -> None:
        reader: EventLog | None = None
        failures = 0
        try:
            while (positions := self._next_positions()) is not None:
                try:
                    if reader is None:
                        reader = EventLog(self._connect(), kind=self.log.kind)
                    batch = reader.read_many(positions, block_ms=self.block_ms, count=self.count)
                except Exception as exc:
                    failures += 1
                    logger.warning("event hub cannot read Redis (%s); retrying", exc)
                    self._fail_all(HubUnavailable(str(exc)))
                    self._close(reader)
                    reader = None
                    time.sleep(min(5.0, 0.1 * 2 ** failures))
                    continue
                failures = 0
                self._dispatch(batch)
                # The subscriptions just woken write to their clients before this reader
                # sends its next read (under gevent, a yield to the ready greenlets).
                time.sleep(0)
        finally:
            self._close(reader)

    def _dispatch(self, batch: dict[str, list[Event]]) -> None:
        with self._lock:
            self._reading = None
            for object_id, events in batch.items():
                if object_id == self._control:
                    self._control_after = events[-1].id
                    continue
                for sub in self._subs.get(object_id, ()):
                    fresh = [e for e in events if id_order(e.id) > id_order(sub.after)]
                    if fresh:
                        sub.after = fresh[-1].id
                        sub.deliver(fresh)

    def _fail_all(self, error: HubUnavailable) -> None:
        with self._lock:
            self._reading = None
            for subs in self._subs.values():
                for sub in subs:
                    sub.deliver(error)

    @staticmethod
    def _close(reader: EventLog | None) -> None:
        if reader is not None:
            try:
                reader.client.close()
            except redis.RedisError:
                logger.debug("event hub: closing its Redis connection failed", exc_info=True)
