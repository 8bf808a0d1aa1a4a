"""Serving the MCP SDK's Streamable HTTP handler (ASGI, asyncio) from the Flask API
(WSGI, gunicorn with gevent workers).

Why a bridge, and why this one: under gevent every request is a greenlet of one OS
thread, and asyncio keeps one running loop per OS thread, so a loop per request cannot
run (two greenlets' loops collide). Each API process therefore runs ONE asyncio loop in
a native thread of its own, started on first use (after gunicorn's fork), holding the
SDK's ``StreamableHTTPSessionManager`` in stateless mode (every POST is self-contained:
no session state lives in a process, so any worker may answer any request) -- two of
them, over the same server: one answering with an SSE stream, for a request whose
notifications must reach the client (it carries a progress token; or a GET), and one
answering plain JSON (the SDK's ``json_response``) for every other request, which then
pays for no stream task, no SSE framing and no chunked response.

One HTTP request is one ``Exchange``: the Flask view hands the SDK an ASGI scope and
the body, and the loop hands back, through the exchange's queue, the ASGI messages to
send (status, headers, then body chunks -- JSON, or an SSE stream carrying progress
notifications) and every blocking call a tool makes (``Exchange.call``): those run in
the request's own greenlet, with the request's resources and principal, so the loop
thread does protocol work only and never blocks on the database or Redis. The queue is
woken across threads by a ``gevent.event.Event`` (safe across native threads, and in a
process without gevent, as in the tests' Flask client).

The SDK runs its synchronous callables (a resource template's value, a sync tool or
prompt) with ``anyio.to_thread.run_sync``, whose worker is a ``threading.Thread``: under
gevent that is a greenlet, spawned on the loop thread's own gevent hub, which never runs
(the loop thread sits in asyncio's selector) -- so ``resources/read`` hung for ever. On
the loop thread, inside an exchange, such a callable is therefore handed to the
request's greenlet like any tool call (``_run_sync``); elsewhere anyio runs it as usual.

A client that goes away closes the response: the ASGI call sees ``http.disconnect``
and is cancelled.
"""
from __future__ import annotations

import asyncio
import collections
import contextvars
import json
import logging
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any

import anyio.to_thread
import gevent.event
from gevent.monkey import get_original
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.jsonrpc_dispatcher import progress_token_from_params

from api.mcp.tools import SCOPE_KEY, build_server

logger = logging.getLogger(__name__)

START_TIMEOUT_S = 30
_END = object()
# The exchange whose ASGI call the current task serves (set only on the loop thread).
_CURRENT: contextvars.ContextVar[Exchange | None] = contextvars.ContextVar(
    "sunrise_mcp_exchange", default=None)
_anyio_run_sync = anyio.to_thread.run_sync


async def _run_sync(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``anyio.to_thread.run_sync``, but in an exchange's request greenlet when called
    from the MCP loop (see the module doc)."""
    exchange = _CURRENT.get()
    if exchange is None:
        return await _anyio_run_sync(func, *args, **kwargs)
    return await exchange.call(func, *args)


class Exchange:
    """One HTTP request's traffic between the Flask greenlet and the MCP loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop, body: bytes):
        self.loop = loop
        self._body = body
        self._items: collections.deque = collections.deque()
        self._wake = gevent.event.Event()
        self._gone = asyncio.Event()  # set (on the loop) when the client has gone
        self._future = None

    # -- the loop's side ---------------------------------------------------------------

    def _post(self, item: Any) -> None:
        self._items.append(item)
        self._wake.set()

    async def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run ``fn(*args)`` in the request's greenlet and await its result."""
        future = self.loop.create_future()
        self._post((fn, args, future))
        return await future

    async def receive(self) -> dict[str, Any]:
        if self._body is not None:
            body, self._body = self._body, None
            return {"type": "http.request", "body": body, "more_body": False}
        await self._gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        self._post(message)

    async def _serving(self, coroutine) -> Any:
        _CURRENT.set(self)  # this task's context, copied by every task the SDK starts
        return await coroutine

    # -- the greenlet's side -------------------------------------------------------------

    def start(self, coroutine) -> None:
        self._future = asyncio.run_coroutine_threadsafe(self._serving(coroutine), self.loop)
        self._future.add_done_callback(lambda _f: self._post(_END))

    def next_message(self, timeout_s: float) -> dict[str, Any] | None:
        """The next ASGI message the SDK sends, running the tools' calls meanwhile; None
        once the ASGI call has ended. Raises TimeoutError after ``timeout_s`` of silence."""
        while True:
            while self._items:
                item = self._items.popleft()
                if item is _END:
                    self._raise_failure()
                    return None
                if isinstance(item, tuple):
                    self._run(*item)
                    continue
                return item
            self._wake.clear()
            if not self._items and not self._wake.wait(timeout_s):
                raise TimeoutError(f"the MCP handler was silent for {timeout_s} s")

    def _run(self, fn: Callable[..., Any], args: tuple, future: asyncio.Future) -> None:
        try:
            value, error = fn(*args), None
        except Exception as exc:  # handed to the tool, which turns it into a tool error
            value, error = None, exc
        self.loop.call_soon_threadsafe(_settle, future, value, error)

    def _raise_failure(self) -> None:
        if self._future is not None and not self._future.cancelled():
            error = self._future.exception()
            if error is not None:
                raise error

    def close(self) -> None:
        """The response is over (sent, or the client went away): end the ASGI call."""
        self.loop.call_soon_threadsafe(self._gone.set)
        if self._future is not None and not self._future.done():
            self._future.cancel()


def _settle(future: asyncio.Future, value: Any, error: BaseException | None) -> None:
    if future.done():  # the waiting tool was cancelled meanwhile
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)


class McpBridge:
    """This process's MCP loop thread and session manager, started on first use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pid: int | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self._managers: dict[bool, Any] = {}  # by "answers with a stream"

    def exchange(self, scope: dict[str, Any], body: bytes,
                 backend_for: Callable[[Exchange], Any]) -> Exchange:
        """Start the ASGI call of one request; ``backend_for(exchange)`` is the tools'
        backend, put in the scope where ``api/mcp/tools.py`` looks for it."""
        self._ensure_started()
        exchange = Exchange(self.loop, body)
        scope[SCOPE_KEY] = backend_for(exchange)
        manager = self._managers[needs_stream(scope["method"], body)]
        exchange.start(manager.handle_request(scope, exchange.receive, exchange.send))
        return exchange

    def _ensure_started(self) -> None:
        if self._pid == os.getpid():
            return
        with self._lock:
            if self._pid == os.getpid():
                return
            ready = gevent.event.Event()
            # A native thread even when gevent has patched threading: the loop must not
            # share the greenlets' OS thread (see the module doc).
            get_original("_thread", "start_new_thread")(self._serve, (ready,))
            if not ready.wait(START_TIMEOUT_S):
                raise RuntimeError("the MCP loop did not start")
            self._pid = os.getpid()

    def _serve(self, ready: gevent.event.Event) -> None:
        selector = get_original("selectors", "DefaultSelector")()
        loop = asyncio.SelectorEventLoop(selector)
        asyncio.set_event_loop(loop)
        anyio.to_thread.run_sync = _run_sync  # idempotent; see the module doc
        try:
            loop.run_until_complete(self._run(loop, ready))
        except Exception:
            logger.exception("the MCP loop stopped")

    async def _run(self, loop: asyncio.AbstractEventLoop, ready: gevent.event.Event) -> None:
        server = build_server()
        managers = {}
        for stream in (True, False):
            # Host and Origin checks are the API's business (keys, CORS), not the SDK's
            # localhost-only default.
            server.streamable_http_app(
                stateless_http=True, json_response=not stream,
                transport_security=TransportSecuritySettings(
                    enable_dns_rebinding_protection=False))
            managers[stream] = server.session_manager  # the one just made
        async with managers[True].run(), managers[False].run():
            self.loop, self._managers = loop, managers
            ready.set()
            await asyncio.Event().wait()  # for the life of the process


def needs_stream(method: str, body: bytes) -> bool:
    """Whether a request to ``/mcp`` is answered with an SSE stream: a GET (the legacy
    standalone stream), a body that is not one JSON-RPC object (the SDK says what is
    wrong with it), or a request carrying a progress token (its notifications travel on
    the stream). Anything else is answered with plain JSON."""
    if method != "POST":
        return True
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return True
    if not isinstance(message, dict):
        return True
    params = message.get("params")
    return isinstance(params, dict) and progress_token_from_params(params) is not None


def asgi_scope(environ: dict[str, Any], headers: Iterator[tuple[str, str]]) -> dict[str, Any]:
    """The ASGI HTTP scope of a WSGI request to ``/mcp``, without its credentials (the API
    has checked them; the SDK needs none)."""
    kept = [(name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in headers if name.lower() not in ("authorization", "cookie")]
    query = environ.get("QUERY_STRING", "").encode("latin-1")
    return {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
        "method": environ["REQUEST_METHOD"], "scheme": environ.get("wsgi.url_scheme", "http"),
        "path": "/mcp", "raw_path": b"/mcp", "root_path": "", "query_string": query,
        "headers": kept, "client": (environ.get("REMOTE_ADDR") or "", 0),
        "server": (environ.get("SERVER_NAME", ""), int(environ.get("SERVER_PORT") or 0)),
        "state": {},
    }
