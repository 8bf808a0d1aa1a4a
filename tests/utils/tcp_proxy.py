"""A loopback TCP proxy that a test can cut and restore, to take a real server away.

Used to make MariaDB "briefly unavailable" to one process (a worker) without touching
the shared MariaDB that other test runs use. While cut, every open connection is
closed and new connections are accepted and closed at once, so clients see a lost
connection (pymysql error 2013) exactly as when a database restarts.

It also keeps the last bytes each client sent (``client_tail``): whether a client ended
its session with the protocol's goodbye (PostgreSQL's Terminate) or just went away.
"""
from __future__ import annotations

import contextlib
import itertools
import logging
import selectors
import socket
import threading
from typing import Self

logger = logging.getLogger(__name__)


class TcpProxy:
    """Forwards ``127.0.0.1:<port>`` to ``target``; :meth:`cut` / :meth:`restore` the link.

    Use as a context manager, or call :meth:`start` and :meth:`stop`. Binds loopback only.
    """

    def __init__(self, target_host: str, target_port: int):
        self.target = (target_host, target_port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._pairs: set[tuple[socket.socket, socket.socket]] = set()
        self._numbers = itertools.count(1)
        self._open: set[int] = set()  # the numbers of the connections forwarded now
        self._tails: dict[int, bytes] = {}  # number -> the last bytes its client sent
        self._cut = threading.Event()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._accept_loop, name=f"tcp-proxy-{self.port}",
                                        daemon=True)

    # -- control ----------------------------------------------------------------------

    def start(self) -> TcpProxy:
        self._thread.start()
        return self

    def cut(self) -> None:
        """Drop every open connection and refuse service until :meth:`restore`."""
        self._cut.set()
        with self._lock:
            pairs, self._pairs = list(self._pairs), set()
        for pair in pairs:
            _shutdown(*pair)  # the pump thread sees EOF and closes them
        logger.info("proxy :%s cut (%d connections dropped)", self.port, len(pairs))

    def restore(self) -> None:
        self._cut.clear()
        logger.info("proxy :%s restored", self.port)

    @property
    def is_cut(self) -> bool:
        return self._cut.is_set()

    def open_connections(self) -> set[int]:
        """The numbers of the client connections forwarded now."""
        with self._lock:
            return set(self._open)

    def client_tail(self, number: int) -> bytes:
        """The last bytes (at most 16) that client connection ``number`` sent."""
        with self._lock:
            return self._tails.get(number, b"")

    def stop(self) -> None:
        self._stopping.set()
        self.cut()
        self._listener.close()
        self._thread.join(5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- plumbing -----------------------------------------------------------------------

    def _accept_loop(self) -> None:
        self._listener.settimeout(0.2)
        while not self._stopping.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            if self._cut.is_set():
                client.close()
                continue
            try:
                client = self._accepted(client)
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            pair = (client, upstream)
            number = next(self._numbers)
            with self._lock:
                self._pairs.add(pair)
                self._open.add(number)
            threading.Thread(target=self._pump, args=(pair, number), daemon=True).start()

    def _accepted(self, client: socket.socket) -> socket.socket:
        """The socket to forward for a client just accepted (a subclass may wrap it)."""
        return client

    def _pump(self, pair: tuple[socket.socket, socket.socket], number: int) -> None:
        client, upstream = pair
        peer = {client: upstream, upstream: client}
        with selectors.DefaultSelector() as sel:
            for sock in pair:
                sock.setblocking(True)
                sel.register(sock, selectors.EVENT_READ)
            try:
                while not self._cut.is_set() and not self._stopping.is_set():
                    for key, _ in sel.select(timeout=0.2):
                        data = key.fileobj.recv(65536)
                        if not data:
                            raise ConnectionResetError
                        if key.fileobj is client:
                            with self._lock:
                                self._tails[number] = (self._tails.get(number, b"") + data)[-16:]
                        peer[key.fileobj].sendall(data)
            except (OSError, ValueError):
                pass
        with self._lock:
            self._pairs.discard(pair)
            self._open.discard(number)
        _close(client, upstream)


def _shutdown(*socks: socket.socket) -> None:
    for sock in socks:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def _close(*socks: socket.socket) -> None:
    _shutdown(*socks)
    for sock in socks:
        sock.close()
