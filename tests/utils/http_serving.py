"""A test's own HTTP request handler served on 127.0.0.1, for stand-ins of the servers
Sunrise calls (webhooks, delivery targets, stubs)."""
from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@contextlib.contextmanager
def serving(handler: type[BaseHTTPRequestHandler], *,
            lifetime_s: float | None = None) -> Iterator[str]:
    """Serve ``handler`` on a free port of 127.0.0.1 from a background thread (a daemon
    thread per request) and yield its base URL, ``http://127.0.0.1:PORT``.

    The server stops and closes its socket when the block ends or, with ``lifetime_s``,
    after that many seconds, so that a test stuck in the block does not keep it serving.
    """
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    deadline = None
    if lifetime_s is not None:
        deadline = threading.Timer(lifetime_s, server.shutdown)
        deadline.daemon = True
        deadline.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        if deadline is not None:
            deadline.cancel()
        server.shutdown()
        server.server_close()
        thread.join(5)
