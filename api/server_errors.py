"""Errors gunicorn answers itself -- a request line or headers too large (414, 431), a
malformed request (400) -- as problem+json, like every other error of the API.

gunicorn writes those answers with ``gunicorn.util.write_error`` before any
application code runs, in HTML. ``install`` (called from the ``post_worker_init``
hook in ``api/gunicorn_conf.py``, inside each worker process) makes that function
write problem+json instead; gunicorn still decides the status and when to answer.
"""
from __future__ import annotations

import json

from api.problems import problem_body

# What a client can do about each; gunicorn's own message is kept for the others.
_DETAILS = {
    414: "The request line (method, path and query string) is longer than this server "
         "accepts; send long input in a JSON body.",
    431: "The request headers are larger, or more numerous, than this server accepts.",
}


def install() -> None:
    """Replace ``gunicorn.util.write_error`` in this (worker) process."""
    from gunicorn import util

    def write_problem(sock, status_int: int, reason: str, mesg: str) -> None:
        detail = _DETAILS.get(status_int) or mesg or reason
        body = json.dumps(problem_body(status_int, reason, detail,
                                       code=reason.lower().replace(" ", "_"))).encode()
        head = (f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\n"
                f"Content-Type: application/problem+json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode("latin-1")
        util.write_nonblock(sock, head + body)

    util.write_error = write_problem
