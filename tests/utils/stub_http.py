"""A tiny HTTP server on 127.0.0.1 that answers every request with one canned response and
records what it was sent: the stand-in for "something else listening on that port"
and for an API whose requests a test inspects.

    with stub_http(401, {"error": "unauthorized"}) as stub:
        ...  # stub.url, then stub.requests: [(method, path, headers), ...]

The body is sent as JSON (a dict or list) or as given (str, with ``content_type``). The
server stops when the block ends or after ``lifetime_s``, whichever comes first.
"""
from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.utils.http_serving import serving

LIFETIME_S = 60.0


@dataclass
class Stub:
    url: str
    requests: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)


@contextlib.contextmanager
def stub_http(status: int, body: Any, *, content_type: str | None = None,
              headers: dict[str, str] | None = None,
              lifetime_s: float = LIFETIME_S) -> Iterator[Stub]:
    raw = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    kind = content_type or ("text/html" if isinstance(body, str) else "application/json")
    stub = Stub(url="")

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            stub.requests.append((self.command, self.path, dict(self.headers)))
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(raw)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(raw)

        do_GET = do_POST = do_PATCH = do_DELETE = _answer

        def log_message(self, *args) -> None:
            pass

    with serving(Handler, lifetime_s=lifetime_s) as url:
        stub.url = url
        yield stub
