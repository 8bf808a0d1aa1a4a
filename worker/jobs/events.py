"""Where a running job's events go: the job's Redis stream, a few at a time.

Events are progress reports; the database row is the truth (SSE and long-poll fall
back to it), so a failed publish is logged and never fails a job. Progress events
that nobody needs the instant they happen -- an LLM call's usage, a thinking
summary, the answer as it grows -- wait for the next event that matters, or for the
end of a network read of the model's stream once the job's last round trip is
``flush_every_s`` old (``flush_if_due``), then travel together in one round trip
(``EventLog.publish_many``). The answer text is read out of the reply only then
(``flush_if_due``'s ``before``), so it leaves at most once per period, as the newest
text there is, and a trip whose text would be no newer than the last is never made.
The read that completes a reply sends nothing: what it brought goes with the round's
``llm_call`` and the next event, a few milliseconds later (a fast model's whole
reply, or the last words of a slow one's). Each ``answer_delta`` carries the whole
answer so far, so of several waiting in a row only the newest is sent: clients get
the same text, every character of it, in order.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from shared.events import TERMINAL_EVENTS, EventSink

logger = logging.getLogger(__name__)

# Held until the next event or flush; any other event (started, tool_call, the
# terminal event) sends what is held before it, in order.
HELD = frozenset({"llm_call", "thinking", "answer_delta"})
# The one held event whose data supersedes its predecessor's: the answer text so far.
CUMULATIVE = "answer_delta"
# Trip times older than the period are forgotten (equal to none) past this many jobs.
_PRUNE_AT = 1024


class NullSink:
    def publish(self, object_id: str, event: str, data: dict[str, Any]) -> None:
        return None

    def flush(self, object_id: str) -> None:
        return None

    def flush_if_due(self, object_id: str, before: Callable[[], None] | None = None) -> None:
        return None  # nobody listens: the answer text is not even read


class BestEffortSink:
    """Publishes through ``sink`` one event at a time, never raising (for sinks that
    cannot take a batch, e.g. the CLI's console printer)."""

    def __init__(self, sink: EventSink):
        self.sink = sink

    def publish(self, object_id: str, event: str, data: dict[str, Any]) -> Any:
        try:
            return self.sink.publish(object_id, event, data)
        except Exception as exc:
            logger.warning("job %s: %s event not published: %s", object_id, event, exc)
            return None

    def flush(self, object_id: str) -> None:
        return None

    def flush_if_due(self, object_id: str, before: Callable[[], None] | None = None) -> None:
        if before is not None:  # every event goes out as it comes
            before()


class BatchingSink:
    """Publishes through an ``EventLog`` in batches (see the module doc), never raising.

    ``flush_every_s`` is how old a job's last round trip must be before the end of a
    read (``flush_if_due``) starts another; 0 sends at every one.
    """

    def __init__(self, log: Any, *, flush_every_s: float = 0.0,
                 clock: Callable[[], float] = time.monotonic):
        self.log = log
        self.flush_every_s = flush_every_s
        self._clock = clock
        self._held: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        self._sent_at: dict[str, float] = {}  # each job's last round trip
        self._prune_at = _PRUNE_AT
        self._lock = threading.Lock()

    def publish(self, object_id: str, event: str, data: dict[str, Any]) -> Any:
        with self._lock:
            held = self._held.setdefault(object_id, [])
            if event == CUMULATIVE and held and held[-1][0] == CUMULATIVE:
                held[-1] = (event, data)  # it holds all the text of the one it replaces
            else:
                held.append((event, data))
        return None if event in HELD else self.flush(object_id)

    def flush_if_due(self, object_id: str, before: Callable[[], None] | None = None) -> Any:
        """At the end of a read of the model's stream: if ``object_id``'s last round trip
        is ``flush_every_s`` old, call ``before()`` (which may publish, e.g. the answer
        text so far) and send what the job holds; else keep holding it. The last stream
        id, or None."""
        if before is None and object_id not in self._held:  # nothing waits (a tool round)
            return None
        sent_at = self._sent_at.get(object_id)
        if sent_at is not None and self._clock() - sent_at < self.flush_every_s:
            return None
        if before is not None:
            before()
        return self.flush(object_id) if object_id in self._held else None

    def flush(self, object_id: str) -> Any:
        """Send what ``object_id`` has held; the last stream id, or None."""
        with self._lock:
            batch = self._held.pop(object_id, None)
            if not batch:
                return None
            self._note_trip(object_id, batch[-1][0])
        try:
            return self.log.publish_many(object_id, batch)
        except Exception as exc:
            logger.warning("job %s: %s events not published: %s", object_id,
                           ", ".join(event for event, _ in batch), exc)
            return None

    def _note_trip(self, object_id: str, last_event: str) -> None:
        """Remember when ``object_id`` last published, forgetting ended jobs and, past
        ``_PRUNE_AT`` jobs, trips older than the period (which count as none)."""
        if last_event in TERMINAL_EVENTS or not self.flush_every_s:
            self._sent_at.pop(object_id, None)
            return
        now = self._sent_at[object_id] = self._clock()
        if len(self._sent_at) > self._prune_at:
            for stale in [oid for oid, at in self._sent_at.items()
                          if now - at >= self.flush_every_s]:
                del self._sent_at[stale]
            self._prune_at = max(_PRUNE_AT, 2 * len(self._sent_at))


JobSink = NullSink | BestEffortSink | BatchingSink


def job_sink(events: EventSink | None, *, flush_every_s: float = 0.0) -> JobSink:
    """The sink a runner publishes through for ``events`` (``flush_every_s``: see
    ``BatchingSink``)."""
    if events is None:
        return NullSink()
    if hasattr(events, "publish_many"):
        return BatchingSink(events, flush_every_s=flush_every_s)
    return BestEffortSink(events)
