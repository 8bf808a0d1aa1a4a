"""Drives the offline model's /_control/ plane from tests."""
from __future__ import annotations

from typing import Any

import httpx


class FakeLlmControl:
    def __init__(self, base_url: str):
        self.base_url = base_url
        self.http = httpx.Client(base_url=base_url, timeout=10)

    def close(self) -> None:
        self.http.close()

    def _post(self, path: str, body: dict[str, Any] | None = None) -> Any:
        resp = self.http.post(f"/_control/{path}", json=body or {})
        resp.raise_for_status()
        return resp.json() if resp.content else None

    def reset(self) -> None:
        self._post("reset")

    def latency(self, fixed_ms: int, jitter_ms: int = 0) -> None:
        self._post("latency", {"fixed_ms": fixed_ms, "jitter_ms": jitter_ms})

    def fault(self, kind: str, **kw) -> None:
        self._post("faults", {"kind": kind, **kw})

    def scenario(self, name: str, turns: list[dict[str, Any]]) -> str:
        """Register a scripted scenario; returns the marker to put in a question."""
        self._post("scenarios", {"name": name, "turns": turns})
        return f"[[scenario:{name}]]"

    def advance_clock(self, seconds: float) -> None:
        self._post("clock", {"advance_s": seconds})

    def log(self) -> list[dict[str, Any]]:
        resp = self.http.get("/_control/log")
        resp.raise_for_status()
        return resp.json()["entries"]

    def message_requests(self) -> list[dict[str, Any]]:
        """The JSON bodies of every POST /v1/messages received, in order."""
        return [r["body"] for r in self.log() if r.get("path") == "/v1/messages"]

    def message_entries(self) -> list[dict[str, Any]]:
        """Whole log entries (body, status, usage returned) of POST /v1/messages."""
        return [r for r in self.log() if r.get("path") == "/v1/messages"]
