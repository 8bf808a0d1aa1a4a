"""redis-py's reply buffer, read by the pooled connections' ``can_read``
(``shared/redis_client.py``).

A zero-timeout ``can_read`` is answered there by one ``poll`` when redis-py holds no
unread reply bytes; whether it does is known only to its Python parser's buffer.
"""
from __future__ import annotations

try:
    from redis._parsers.socket import SocketBuffer
except ImportError:  # another layout: every check goes to redis-py itself
    SocketBuffer = None

LIBRARY = "redis"
VERIFIED_VERSION = "8.1.0"


def idle_socket(connection):
    """``connection``'s socket when it is connected and redis-py holds no unread bytes of
    it; None otherwise, and when its parser is not one whose buffer can be seen (hiredis)."""
    sock = getattr(connection, "_sock", None)
    buffer = getattr(getattr(connection, "_parser", None), "_buffer", None)
    if sock is None or SocketBuffer is None or not isinstance(buffer, SocketBuffer) \
            or buffer.unread_bytes():
        return None
    return sock
