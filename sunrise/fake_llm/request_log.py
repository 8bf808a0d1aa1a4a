"""The request log and counters behind `GET /_control/log` and `GET /_control/stats`.

Every `/v1/...` request is recorded once its response status is known: method,
path, a subset of headers (never credentials: only which auth scheme was used),
the full JSON body, wall time, status, and the usage / stop reason / faults /
scenario of the reply. The log keeps the newest `max_entries`; stats count
everything since the last reset.
"""

from __future__ import annotations

import time
from collections import Counter, deque

from starlette.requests import Request

LOGGED_HEADERS = (
    "anthropic-version",
    "anthropic-beta",
    "content-type",
    "user-agent",
    "x-stainless-retry-count",
    "x-stainless-timeout",
    "idempotency-key",
)
USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


def auth_scheme(request: Request) -> str | None:
    """Which credential the request carried: `x-api-key`, `bearer`, or None."""
    if request.headers.get("x-api-key"):
        return "x-api-key"
    if request.headers.get("authorization", "").lower().startswith("bearer "):
        return "bearer"
    return None


class RequestLog:
    """Ordered record of API requests on one server instance."""

    def __init__(self, max_entries: int):
        self._entries: deque[dict] = deque(maxlen=max_entries)
        self._seq = 0
        self._streams = 0
        self._counters: dict[str, Counter] = {}
        self.clear()

    def clear(self) -> None:
        self._entries.clear()
        self._seq = 0
        self._streams = 0
        self._counters = {
            name: Counter()
            for name in ("by_path", "by_status", "faults", "scenarios", "usage", "cache")
        }

    def record(self, request: Request, body: object, status: int, **outcome: object) -> dict:
        """Append one entry; `outcome` holds usage, stop_reason, faults, scenario, stream..."""
        self._seq += 1
        headers = {
            name: request.headers[name] for name in LOGGED_HEADERS if name in request.headers
        }
        headers["auth"] = auth_scheme(request)
        entry = {
            "seq": self._seq,
            "time": time.time(),
            "method": request.method,
            "path": request.url.path,
            "headers": headers,
            "body": body,
            "status": status,
            "request_id": getattr(request.state, "request_id", None),
            **{key: value for key, value in outcome.items() if value is not None},
        }
        self._entries.append(entry)
        self._count(entry)
        return entry

    def _count(self, entry: dict) -> None:
        counters = self._counters
        counters["by_path"][entry["path"]] += 1
        counters["by_status"][str(entry["status"])] += 1
        for kind in entry.get("faults", ()):
            counters["faults"][kind] += 1
        if "scenario" in entry:
            counters["scenarios"][entry["scenario"]] += 1
        usage = entry.get("usage") or {}
        for key in USAGE_KEYS:
            counters["usage"][key] += usage.get(key, 0)
        if usage.get("cache_read_input_tokens"):
            counters["cache"]["reads"] += 1
        if usage.get("cache_creation_input_tokens"):
            counters["cache"]["writes"] += 1
        if entry.get("stream"):
            self._streams += 1

    def entries(self, since: int = 0) -> list[dict]:
        """Entries with `seq` greater than `since`, oldest first."""
        return [entry for entry in self._entries if entry["seq"] > since]

    def stats(self) -> dict:
        return {
            "requests": self._seq,
            "streams": self._streams,
            **{name: dict(counter) for name, counter in self._counters.items()},
        }
