"""The pooled Redis client's check of a connection it hands out answers as redis-py's
own does: nothing pending, a reply left unread, a connection the server closed."""
from __future__ import annotations

import time

import redis

from shared.redis_client import redis_for


def _answers(conn) -> tuple[bool, bool]:
    return conn.can_read(), redis.Connection.can_read(conn)


def test_the_check_sees_what_redis_py_sees(redis_url):
    pool = redis_for(redis_url).connection_pool
    conn = pool.get_connection()
    try:
        assert _answers(conn) == (False, False)
        conn.send_command("PING")  # its reply is left unread
        time.sleep(0.05)
        assert _answers(conn) == (True, True)
        assert conn.read_response() == "PONG"
        assert _answers(conn) == (False, False)
    finally:
        pool.release(conn)


def test_a_connection_the_server_closed_is_replaced(redis_url):
    client = redis_for(redis_url)
    pool = client.connection_pool
    conn = pool.get_connection()
    port = conn._sock.getsockname()[1]
    pool.release(conn)
    killer = redis.Redis.from_url(redis_url)
    try:
        assert killer.execute_command("CLIENT", "KILL", "ADDR", f"127.0.0.1:{port}")
    finally:
        killer.close()
    time.sleep(0.05)
    assert client.ping() is True
