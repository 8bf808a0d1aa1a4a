"""Running the offline model: blocking `serve()` for the CLI, `run_in_thread()` for
tests and in-process demos.

Both use uvicorn (uvloop/httptools when installed) with `log_level="warning"`
and no access log: one process, one event loop, no per-request work outside the
app, which sustains hundreds of requests per second on one core.
"""

from __future__ import annotations

import argparse
import threading
import time
from collections.abc import Sequence
from typing import Self

import uvicorn
from starlette.types import ASGIApp

from sunrise.fake_llm.app import create_app
from sunrise.fake_llm.config import FakeLLMConfig


def _uvicorn_config(app: ASGIApp, host: str, port: int) -> uvicorn.Config:
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        lifespan="off",
        # Longer than client pools keep idle connections (httpx: 5 s), so a client
        # never reuses a connection the server is closing at that very moment.
        timeout_keep_alive=30,
        # A hung request must not hold shutdown hostage.
        timeout_graceful_shutdown=1,
    )


def serve(
    host: str = "127.0.0.1",
    port: int = 8765,
    latency_ms: float = 0,
    jitter_ms: float = 0,
    **config: object,
) -> None:
    """Serve the offline model until interrupted (Ctrl-C / SIGTERM). Blocks.

    Extra keyword arguments are `FakeLLMConfig` fields (seed, hang_seconds, ...).
    """
    app = create_app(FakeLLMConfig(latency_ms=latency_ms, jitter_ms=jitter_ms, **config))
    uvicorn.Server(_uvicorn_config(app, host, port)).run()


class ServerHandle:
    """A server running on a background thread; `stop()` ends it (idempotent)."""

    def __init__(
        self, server: uvicorn.Server, thread: threading.Thread, app: ASGIApp, host: str, port: int
    ):
        self._server = server
        self._thread = thread
        self.app = app
        self.host = host
        self.port = port
        self.base_url = f"http://{host}:{port}"

    @property
    def state(self):
        """The app's `FakeLLMState`, for in-process inspection."""
        return self.app.state.fake_llm

    def stop(self, timeout: float = 5.0) -> None:
        state = getattr(getattr(self.app, "state", None), "fake_llm", None)
        if state is not None:
            state.stopping = True
        self._server.should_exit = True
        self._thread.join(timeout)
        if self._thread.is_alive():
            self._server.force_exit = True
            self._thread.join(timeout)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def run_in_thread(
    port: int = 0,
    host: str = "127.0.0.1",
    app: ASGIApp | None = None,
    startup_timeout: float = 10.0,
    **config: object,
) -> ServerHandle:
    """Start a server on a daemon thread and wait (at most `startup_timeout` s) until
    it accepts connections. `port=0` picks a free port; read `handle.base_url`.

    `app` defaults to `create_app(FakeLLMConfig(**config))`; any ASGI app may be
    given (tests serve recorded fixtures this way). Raises RuntimeError if the
    server does not start in time (the half-started server is stopped first).
    """
    app = app or create_app(FakeLLMConfig(**config))
    server = uvicorn.Server(_uvicorn_config(app, host, port))
    thread = threading.Thread(target=server.run, name=f"fake-llm-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + startup_timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            thread.join(2)
            raise RuntimeError(
                f"offline model did not start on {host}:{port} within {startup_timeout} s"
            )
        time.sleep(0.01)
    bound = server.servers[0].sockets[0].getsockname()[1]
    return ServerHandle(server, thread, app, host, bound)


def main(argv: Sequence[str] | None = None) -> int:
    """`sunrise fake-llm` / `python -m sunrise.fake_llm`: serve until interrupted."""
    parser = argparse.ArgumentParser(
        prog="sunrise fake-llm",
        description="Serve Sunrise's offline, Anthropic-compatible model (a test double).",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--jitter-ms", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hang-seconds", type=float, default=600.0)
    args = parser.parse_args(argv)
    serve(
        args.host,
        args.port,
        args.latency_ms,
        args.jitter_ms,
        seed=args.seed,
        hang_seconds=args.hang_seconds,
    )
    return 0
