"""Errors gunicorn answers itself, before the app sees the request, are problem+json
like every other error of the API (the real server: gunicorn with gevent workers)."""
from __future__ import annotations

import socket

import pytest


def _raw(api, request: bytes) -> tuple[int, dict[str, str], bytes]:
    with socket.create_connection(("127.0.0.1", api.port), timeout=10) as sock:
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in header_lines)}
    return int(status_line.split()[1]), headers, body


@pytest.mark.parametrize("request_bytes,status", [
    # Past gunicorn's 4,094 bytes, inside what it reads at once (no reset before we read).
    (b"GET /v1/jobs/" + b"x" * 5_000 + b" HTTP/1.1\r\nHost: t\r\n\r\n", 414),
    (b"GET /healthz HTTP/1.1\r\nHost: t\r\nX-Big: " + b"y" * 8_300 + b"\r\n\r\n", 431),
    (b"GET /healthz HTTP/1.1\r\nHost: t\r\n" + b"".join(b"X-H%d: 1\r\n" % i for i in range(150))
     + b"\r\n", 431),
    (b"GET /healthz HTTP/1.1\r\nHost: t\r\nBad Header: 1\r\n\r\n", 400),
])
def test_errors_the_server_answers_itself_are_problem_json(live_api, request_bytes, status):
    import json

    code, headers, body = _raw(live_api, request_bytes)
    assert code == status
    assert headers["content-type"] == "application/problem+json"
    assert int(headers["content-length"]) == len(body)
    problem = json.loads(body)
    assert problem["status"] == status and problem["title"] and problem["detail"]
    assert problem["type"].startswith("https://sunrise.dev/problems/")
