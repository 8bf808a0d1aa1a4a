"""Job progress events: one capped Redis stream per job, kept for a while after the end.

Stream entry ids double as SSE ``id:`` values, so ``Last-Event-ID`` resumes exactly.
Exactly one terminal event is ever written per job (guarded by a SET NX marker).
A publish is one Lua script: the guard, the entries and the expiry in one round trip.
"""
from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from typing import Any, NamedTuple, Protocol

import redis

from shared.redis_client import LuaScript

logger = logging.getLogger(__name__)

# "completed" ends a batch stream, "ready" (or "failed") a dataset import's; jobs end
# with succeeded, failed or cancelled.
TERMINAL_EVENTS = frozenset({"succeeded", "failed", "cancelled", "completed", "ready"})


class EventSink(Protocol):
    """Where progress events go: an ``EventLog``, or a console printer for the CLI."""

    def publish(self, object_id: str, event: str, data: dict[str, Any]) -> Any: ...


class Event(NamedTuple):
    id: str
    event: str
    data: dict[str, Any]

    @property
    def is_terminal(self) -> bool:
        return self.event in TERMINAL_EVENTS


# A Redis stream id is two unsigned 64-bit numbers, "<milliseconds>-<sequence>".
MAX_ID_PART = 2**64 - 1
STREAM_ID_PATTERN = r"^\d{1,20}-\d{1,20}$"
_STREAM_ID = re.compile(STREAM_ID_PATTERN)


def id_order(stream_id: str) -> tuple[int, int]:
    """``(milliseconds, sequence)`` of a stream id known to be well formed."""
    millis, _, seq = stream_id.partition("-")
    return int(millis), int(seq or 0)


def check_stream_id(value: str) -> str:
    """Return ``value`` if Redis would accept it as a stream position, else raise ValueError.

    Twenty digits pass a pattern but can exceed 2^64 - 1, and Redis then refuses the
    whole read it appears in -- for every stream of that read, not just this one.
    """
    if not isinstance(value, str) or not _STREAM_ID.match(value) or max(id_order(value)) > MAX_ID_PART:
        raise ValueError(f"{str(value)[:60]!r} is not a stream id (two numbers up to "
                         f"{MAX_ID_PART}, as in 1700000000000-0)")
    return value


def stream_key(kind: str, object_id: str) -> str:
    return f"sunrise:events:{kind}:{object_id}"


# KEYS: the stream, its terminal marker. ARGV: maxlen, ttl, the terminal event of the
# batch ("" if none), then event, data pairs. Nothing is written when the marker is
# already set; returns the last entry id, or nil then.
_PUBLISH = """
if ARGV[3] ~= '' and not redis.call('SET', KEYS[2], ARGV[3], 'NX', 'EX', ARGV[2]) then
  return false
end
local id = false
for i = 4, #ARGV, 2 do
  id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'event', ARGV[i],
                  'data', ARGV[i + 1])
end
redis.call('EXPIRE', KEYS[1], ARGV[2])
return id
"""
_PUBLISH_SCRIPT = LuaScript(_PUBLISH)

# An event's data as JSON: the bytes json.dumps(data, default=str, separators=(",", ":"))
# gives, from one encoder (json.dumps builds one per call when given options), and
# without the cycle check (≈ 20 % of encoding a job's events; data is built from rows
# and fresh dicts, and a cycle would still raise, as RecursionError, not ValueError).
_to_json = json.JSONEncoder(default=str, separators=(",", ":"), check_circular=False).encode


class EventLog:
    """Append and read the event stream of jobs (``kind="job"``) or batches."""

    def __init__(self, client: redis.Redis, *, maxlen: int = 2000, ttl_s: int = 86400,
                 kind: str = "job"):
        self.client = client
        self.maxlen = maxlen
        self.ttl_s = ttl_s
        self.kind = kind

    def publish(self, object_id: str, event: str, data: dict[str, Any]) -> str | None:
        """Append one event; a terminal event is written at most once per object.

        Returns the stream id, or None when a terminal event was already written.
        """
        return self.publish_many(object_id, [(event, data)])

    def publish_many(self, object_id: str, events: list[tuple[str, dict[str, Any]]]) -> str | None:
        """Append ``events`` (name, data) in order, in one round trip. A terminal event
        must come last; when the object already has one, nothing is written.

        Returns the last stream id, or None when a terminal event was already written.
        """
        key = stream_key(self.kind, object_id)
        last = events[-1][0]
        argv: list[Any] = [self.maxlen, self.ttl_s, last if last in TERMINAL_EVENTS else ""]
        for event, data in events:
            argv += (event, _to_json(data))
        entry_id = _PUBLISH_SCRIPT(self.client, (key, f"{key}:terminal"), *argv)
        return entry_id.decode() if isinstance(entry_id, bytes) else entry_id

    def last_id(self, object_id: str) -> str:
        """The id of the newest event, or ``"0-0"`` when there is none yet."""
        newest = self.client.xrevrange(stream_key(self.kind, object_id), count=1)
        return newest[0][0] if newest else "0-0"

    def last(self, object_id: str) -> Event | None:
        """The newest event, or None when the stream is empty or expired."""
        newest = self.client.xrevrange(stream_key(self.kind, object_id), count=1)
        return next(iter(_decode(newest)), None)

    def read(self, object_id: str, after: str = "0-0", *, block_ms: int | None = None,
             count: int = 500) -> list[Event]:
        """Events strictly after ``after``; waits up to ``block_ms`` when there are none."""
        key = stream_key(self.kind, object_id)
        reply = self.client.xread({key: after or "0-0"}, count=count, block=block_ms)
        return list(_decode(reply[0][1])) if reply else []

    def read_many(self, positions: dict[str, str], *, block_ms: int | None = None,
                  count: int = 500) -> dict[str, list[Event]]:
        """For many objects in one call: the events after each one's position, by object
        id (objects with none are left out); waits up to ``block_ms`` when none has any."""
        keys = {stream_key(self.kind, object_id): object_id for object_id in positions}
        reply = self.client.xread({key: positions[oid] for key, oid in keys.items()},
                                  count=count, block=block_ms)
        return {keys[key]: list(_decode(entries)) for key, entries in reply or ()}

    def has_terminal(self, object_id: str) -> bool:
        return bool(self.client.exists(f"{stream_key(self.kind, object_id)}:terminal"))


def _decode(entries: Iterable[tuple[str, dict[str, str]]]) -> Iterable[Event]:
    for entry_id, fields in entries:
        try:
            data = json.loads(fields.get("data") or "{}")
        except ValueError:
            logger.warning("undecodable event %s", entry_id)
            data = {}
        yield Event(entry_id, fields.get("event", "message"), data)
