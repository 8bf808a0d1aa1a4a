"""The pooled Redis client's check of a connection it hands out answers as redis-py's
own does (nothing pending, a reply left unread in the socket or in the parser's buffer,
a connection the server closed), and the pool acts on it: a connection still holding a
reply is never handed to the next command."""
from __future__ import annotations

import select
import time

import pytest
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


def test_the_check_sees_a_reply_already_in_the_parsers_buffer(redis_url):
    """Two replies arriving in one read: after the first is parsed the second sits in
    the parser's buffer with nothing left on the socket, and is still pending."""
    pool = redis_for(redis_url).connection_pool
    conn = pool.get_connection()
    try:
        conn.send_packed_command(conn.pack_commands([("PING",), ("ECHO", "second")]))
        assert conn.read_response() == "PONG"
        assert _answers(conn) == (True, True)
        assert conn.read_response() == "second"
        assert _answers(conn) == (False, False)
    finally:
        pool.release(conn)


@pytest.fixture
def own_client(redis_url):
    """A client built as ``redis_for`` builds it, on a pool of its own: a connection
    this test desyncs must not answer other tests' commands."""
    client = redis_for.__wrapped__(redis_url)
    yield client
    client.connection_pool.disconnect()


def _assert_the_pool_answers_each_command_its_own_reply(client: redis.Redis) -> None:
    # A SET that reads someone else's PONG returns False; a GET then reads the SET's OK.
    assert client.set("redis-client-test:own-reply", "mine") is True
    assert client.get("redis-client-test:own-reply") == "mine"
    assert client.ping() is True


def test_a_reply_left_unread_is_not_handed_to_the_next_command(own_client):
    """A command whose reader gave up before its reply (here: a PING sent and never
    read) returns its connection to the pool with that reply pending; the pool must
    not give it to the next command as clean (it once answered a SET with a PONG)."""
    client = own_client
    pool = client.connection_pool
    conn = pool.get_connection()
    conn.send_command("PING")
    # Wait for the reply to reach the socket, so the pool's check has something to see.
    assert select.select([conn._sock], [], [], 2.0)[0]
    pool.release(conn)
    _assert_the_pool_answers_each_command_its_own_reply(client)


def test_a_pipeline_that_stops_reading_midway_does_not_desync_the_pool(own_client):
    """redis-py's own path to an unread reply: a pipeline stops reading at the first
    reply its callback cannot take and releases its connection with the rest unread."""
    client = own_client
    # A second client on the same pool, so the failing callback stays off ``client``.
    strict = redis.Redis(connection_pool=client.connection_pool)
    strict.set_response_callback("ECHO", lambda reply, **options: int(reply))
    pipe = strict.pipeline(transaction=False)
    pipe.echo("not a number").ping()
    with pytest.raises(ValueError):
        pipe.execute()  # ECHO's callback raised: the PING's reply is left unread
    _assert_the_pool_answers_each_command_its_own_reply(client)


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
