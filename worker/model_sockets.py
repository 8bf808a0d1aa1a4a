"""The model clients' sockets are told their timeout only when it changes.

httpcore sets a connection's socket timeout before every read and every write. Each
set is a system call that lets go of the GIL, and with hundreds of model calls
streaming in one worker every let-go hands the interpreter to another thread and back
(the GIL hand-offs of ``settimeout`` were ≈ 9 % of the worker's CPU at 200 in flight,
most of them here). A call's reads all carry the same timeout, so after its first
read the socket already has it.

Only plain TCP sockets change class; a TLS connection wraps its socket in an
``SSLSocket`` of its own and keeps httpcore's behaviour.
"""
from __future__ import annotations

import logging
import socket

import httpcore2
import httpx2

logger = logging.getLogger(__name__)


class SteadyTimeoutSocket(socket.socket):
    """A socket whose ``settimeout`` skips the system call when the timeout is unchanged."""

    __slots__ = ()

    def settimeout(self, value: float | None) -> None:
        if value != self.gettimeout():
            super().settimeout(value)


class SteadyTimeoutBackend(httpcore2.SyncBackend):
    """httpcore's blocking backend, its TCP sockets ``SteadyTimeoutSocket``s."""

    def connect_tcp(self, *args, **kwargs) -> httpcore2.NetworkStream:
        stream = super().connect_tcp(*args, **kwargs)
        sock = stream.get_extra_info("socket")
        if type(sock) is socket.socket:
            sock.__class__ = SteadyTimeoutSocket
        return stream


def steady_timeouts(client: httpx2.Client) -> httpx2.Client:
    """``client`` (the SDK's default httpx client, as built) with its connection pool on
    ``SteadyTimeoutBackend``; left as it is (and logged) if httpx's layout differs."""
    pool = getattr(getattr(client, "_transport", None), "_pool", None)
    if isinstance(pool, httpcore2.ConnectionPool) and isinstance(
            getattr(pool, "_network_backend", None), httpcore2.SyncBackend):
        pool._network_backend = SteadyTimeoutBackend()
    else:
        logger.info("model client: httpx transport not recognised; socket timeouts set per call")
    return client
