"""Where a running job's events go: the job's Redis stream, a few at a time.

Events are progress reports; the database row is the truth (SSE and long-poll fall
back to it), so a failed publish is logged and never fails a job. Progress events
that nobody needs the instant they happen -- an LLM call's usage, a thinking
summary, the answer as it grows -- wait for the next event that matters or for the
end of the network read that produced them (``flush``), then travel together in one
round trip (``EventLog.publish_many``): a job publishes in about half the trips, and
streamed answer text still leaves with each read of the model's stream.
"""
from __future__ import annotations

import logging
import threading
from typing import Any

from shared.events import EventSink

logger = logging.getLogger(__name__)

# Held until the next event or flush; any other event (started, tool_call, the
# terminal event) sends what is held before it, in order.
HELD = frozenset({"llm_call", "thinking", "answer_delta"})


class NullSink:
    def publish(self, object_id: str, event: str, data: dict[str, Any]) -> None:
        return None

    def flush(self, object_id: str) -> None:
        return None


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


class BatchingSink:
    """Publishes through an ``EventLog`` in batches (see the module doc), never raising."""

    def __init__(self, log: Any):
        self.log = log
        self._held: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        self._lock = threading.Lock()

    def publish(self, object_id: str, event: str, data: dict[str, Any]) -> Any:
        with self._lock:
            self._held.setdefault(object_id, []).append((event, data))
        return None if event in HELD else self.flush(object_id)

    def flush(self, object_id: str) -> Any:
        """Send what ``object_id`` has held; the last stream id, or None."""
        with self._lock:
            batch = self._held.pop(object_id, None)
        if not batch:
            return None
        try:
            return self.log.publish_many(object_id, batch)
        except Exception as exc:
            logger.warning("job %s: %s events not published: %s", object_id,
                           ", ".join(event for event, _ in batch), exc)
            return None


JobSink = NullSink | BestEffortSink | BatchingSink


def job_sink(events: EventSink | None) -> JobSink:
    """The sink a runner publishes through for ``events``."""
    if events is None:
        return NullSink()
    return BatchingSink(events) if hasattr(events, "publish_many") else BestEffortSink(events)
