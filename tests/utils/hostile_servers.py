"""Servers a hostile tenant could point a dataset at, on 127.0.0.1, each stopping by itself.

- ``rogue_mysql``: speaks just enough of the MySQL protocol (handshake, OK to any login)
  to answer every query but the driver's ``SET`` statements with a LOCAL INFILE request
  for ``filename``, and records what
  the client sends after it: a client with LOCAL INFILE on sends the file there.
- ``silent_server``: accepts connections and never says a word.
- ``garbage_server``: answers every connection with bytes of no database protocol.

Each is a context manager yielding the port (and for the rogue server, what it got);
its thread ends when the block ends or after ``lifetime_s``, whichever comes first.
"""
from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

LIFETIME_S = 30.0
_SALT = b"abcdefgh" + b"ijklmnopqrst"


@dataclass
class RogueLog:
    """What the rogue server saw: connections, queries, and bytes sent after a request
    for the file (the file's contents if the client obeyed)."""

    connections: int = 0
    queries: list[bytes] = field(default_factory=list)
    file_bytes: bytes = b""


def _packet(seq: int, payload: bytes) -> bytes:
    return struct.pack("<I", len(payload))[:3] + bytes([seq & 0xFF]) + payload


def _read_packet(conn: socket.socket) -> tuple[int, bytes] | None:
    header = _read_exactly(conn, 4)
    if header is None:
        return None
    length = int.from_bytes(header[:3], "little")
    payload = _read_exactly(conn, length) if length else b""
    return (header[3], payload) if payload is not None else None


def _read_exactly(conn: socket.socket, n: int) -> bytes | None:
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _handshake() -> bytes:
    capabilities = 0x0001 | 0x0004 | 0x0200 | 0x8000 | 0x00080000 | 0x0008  # + LOCAL_FILES
    capabilities |= 0x0080
    return (b"\x0a" + b"5.7.99-rogue\x00" + struct.pack("<I", 7) + _SALT[:8] + b"\x00"
            + struct.pack("<H", capabilities & 0xFFFF) + b"\x21" + struct.pack("<H", 2)
            + struct.pack("<H", capabilities >> 16) + bytes([len(_SALT) + 1]) + b"\x00" * 10
            + _SALT[8:] + b"\x00" + b"mysql_native_password\x00")


_OK = b"\x00\x00\x00\x02\x00\x00\x00"


def _serve_rogue(conn: socket.socket, filename: str, log: RogueLog) -> None:
    conn.sendall(_packet(0, _handshake()))
    login = _read_packet(conn)
    if login is None:
        return
    conn.sendall(_packet(login[0] + 1, _OK))
    packet = _read_packet(conn)
    for _ in range(20):
        if packet is None or packet[1][:1] != b"\x03":  # COM_QUERY only
            return
        log.queries.append(packet[1][1:])
        if packet[1][1:5].upper() == b"SET ":  # the driver's own set-up reads a plain OK
            conn.sendall(_packet(packet[0] + 1, _OK))
            packet = _read_packet(conn)
            continue
        asked = packet[0] + 1
        conn.sendall(_packet(asked, b"\xfb" + filename.encode()))
        # An obeying client answers in sequence (asked + 1, ...) with the file, then an
        # empty packet; one that refuses sends its next command (sequence 0) or hangs up.
        packet = _read_packet(conn)
        while packet is not None and packet[0] != 0 and packet[1]:
            log.file_bytes += packet[1]
            packet = _read_packet(conn)
        if packet is not None and packet[0] != 0:
            conn.sendall(_packet(packet[0] + 1, _OK))
            packet = _read_packet(conn)


@contextlib.contextmanager
def _server(handle: Callable[[socket.socket], None],
            lifetime_s: float = LIFETIME_S) -> Iterator[int]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.2)
    stop = threading.Event()
    deadline = time.monotonic() + lifetime_s
    held: list[socket.socket] = []

    def run() -> None:
        while not stop.is_set() and time.monotonic() < deadline:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            held.append(conn)
            conn.settimeout(max(0.1, deadline - time.monotonic()))
            with contextlib.suppress(OSError):
                handle(conn)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join(5)
        for conn in held:
            conn.close()
        listener.close()


@contextlib.contextmanager
def rogue_mysql(filename: str) -> Iterator[tuple[int, RogueLog]]:
    """(port, log) of a MySQL look-alike asking every client for ``filename``."""
    log = RogueLog()

    def handle(conn: socket.socket) -> None:
        log.connections += 1
        try:
            _serve_rogue(conn, filename, log)
        finally:
            conn.close()

    with _server(handle) as port:
        yield port, log


@contextlib.contextmanager
def silent_server() -> Iterator[int]:
    """A port that accepts and then says nothing (connections held open until the end)."""
    with _server(lambda conn: None) as port:
        yield port


@contextlib.contextmanager
def garbage_server() -> Iterator[int]:
    """A port that answers with a line of no database protocol and hangs up."""

    def handle(conn: socket.socket) -> None:
        conn.sendall(b"-ERR unknown command 'GET'\r\nSSH-2.0-OpenSSH_9.6\r\n" * 4)
        conn.close()

    with _server(handle) as port:
        yield port
