"""The connections one live engine keeps in this process, closed when idle.

Every connection is opened by the ``open_connection`` the engine gives (it goes
through ``live_connection.connect``: the outbound policy after DNS and on the
connected socket). At most ``max_idle`` wait for reuse; one idle for ``idle_close_s``
is closed by a reaper thread, started with the first connection given back (never at
import) and ended by ``close``. A connection whose query failed in a way that leaves it
unusable is discarded by the caller (``release(conn, reusable=False)``); one whose
server closed it while it was idle (a restart, an idle timeout, a network cut) is found
before it is handed out, without a round trip (``is_gone``: ``peer_closed`` peeks at
its socket), and replaced.
"""
from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

logger = logging.getLogger(__name__)


class ConnectionPool:
    def __init__(self, open_connection: Callable[[], Any], *, max_idle: int,
                 idle_close_s: float, label: str,
                 is_gone: Callable[[Any], bool] = lambda conn: False) -> None:
        self._open = open_connection
        self._is_gone = is_gone
        self.max_idle = max(1, int(max_idle))
        self.idle_close_s = float(idle_close_s)
        self._label = label
        self._idle: list[tuple[Any, float]] = []  # (connection, when it became idle)
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._reaper: threading.Thread | None = None
        self.opened = 0  # for tests and benchmarks

    def acquire(self) -> tuple[Any, bool]:
        """``(connection, reused)``: the most recently idle one, else a new one. Raises
        what opening raises (``SourceRefused``, ``SourceUnreachable``) or ``RuntimeError``
        once closed."""
        while True:
            with self._lock:
                if self._closed.is_set():
                    raise RuntimeError("the live engine is closed")
                if not self._idle:
                    break
                conn = self._idle.pop()[0]
            if not self._is_gone(conn):
                return conn, True
            logger.info("live %s: an idle connection was closed by the server; replaced",
                        self._label)
            _close(conn)
        conn = self._open()
        with self._lock:
            self.opened += 1
        return conn, False

    def release(self, conn: Any, *, reusable: bool = True) -> None:
        with self._lock:
            keep = reusable and not self._closed.is_set() and len(self._idle) < self.max_idle
            if keep:
                self._idle.append((conn, time.monotonic()))
                if self._reaper is None:
                    self._reaper = threading.Thread(target=self._reap, daemon=True,
                                                    name=f"live-pool-{self._label}")
                    self._reaper.start()
        if not keep:
            _close(conn)

    def session_ids(self, session_id: Callable[[Any], int]) -> set[int]:
        """The server's ids of the idle connections (for tests and operators)."""
        with self._lock:
            return {session_id(conn) for conn, _since in self._idle}

    def idle_count(self) -> int:
        with self._lock:
            return len(self._idle)

    def close_idle(self, older_than_s: float | None = None) -> int:
        """Close the connections idle longer than ``older_than_s`` (default
        ``idle_close_s``); returns how many."""
        limit = time.monotonic() - (self.idle_close_s if older_than_s is None else older_than_s)
        with self._lock:
            stale = [conn for conn, since in self._idle if since <= limit]
            self._idle = [(conn, since) for conn, since in self._idle if since > limit]
        for conn in stale:
            _close(conn)
        return len(stale)

    def close(self) -> None:
        """Close every idle connection and stop the reaper; later ``acquire`` raises."""
        self._closed.set()
        with self._lock:
            idle, self._idle = self._idle, []
        for conn, _since in idle:
            _close(conn)
        if self._reaper is not None and self._reaper is not threading.current_thread():
            self._reaper.join(5)

    def _reap(self) -> None:
        while not self._closed.wait(max(0.05, self.idle_close_s / 2)):
            closed = self.close_idle()
            if closed:
                logger.info("live %s: closed %d idle connection(s)", self._label, closed)


def peer_closed(fileno: int | None) -> bool:
    """Whether the peer of the idle connection on socket ``fileno`` has closed it (an
    end of stream or a reset is waiting), by one non-blocking peek: nothing is read.
    Data waiting (a TLS record, a server's last words) is left to the next statement."""
    if fileno is None or fileno < 0:
        return fileno is not None
    sock = socket.socket(fileno=fileno)
    try:
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except (BlockingIOError, InterruptedError):
        return False
    except OSError:
        return True
    finally:
        sock.detach()


def _close(conn: Any) -> None:
    with contextlib.suppress(Exception):  # a broken connection may fail to close
        conn.close()
