"""The pooled Redis client's check of a connection it hands out answers as redis-py's
own does (nothing pending, a reply left unread in the socket, in the parser's buffer or
in the TLS layer, a connection the server closed), and the pool acts on it: a connection
still holding a reply is never handed to the next command. Both clients connect as the
URL says (TLS for rediss://, with its ssl_* parameters; a Unix socket for unix://),
still gated."""
from __future__ import annotations

import select
import ssl
import sys
import time
import types

import pytest
import redis

from shared import redis_client
from shared.redis_client import SOCKET_TIMEOUT_S, dedicated_redis, redis_for
from tests.utils.redis_urls import tls_url


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


def test_the_check_polls_with_the_os_poll_under_gevents_patching(monkeypatch):
    """gevent's patched ``select.poll`` starts a watcher and turns the hub even for a zero
    timeout (the API's gunicorn workers): the check takes the original one."""
    real = select.poll
    gevent_monkey = types.SimpleNamespace(
        get_original=lambda module, name: real if (module, name) == ("select", "poll") else None)
    monkeypatch.setitem(sys.modules, "gevent.monkey", gevent_monkey)
    monkeypatch.setattr(select, "poll", lambda: pytest.fail("gevent's poll was used"))
    assert redis_client._os_poll.__wrapped__() is real


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


# -- the connection class the URL asks for ---------------------------------------------

def _assert_gated(client: redis.Redis) -> None:
    """The client's connections fail at once, before any socket, while the gate is open."""
    pool = client.connection_pool
    pool.disconnect()
    pool.connection_class.gate.failed(redis.ConnectionError("test: the gate opened"))
    started = time.monotonic()
    with pytest.raises(redis.ConnectionError, match="Redis skipped"):
        client.ping()
    assert time.monotonic() - started < 0.5


def test_a_rediss_url_gets_a_gated_tls_connection_with_its_ssl_parameters(redis_url):
    url = tls_url(redis_url, ssl_cert_reqs="none", ssl_ca_certs="/etc/sunrise/ca.pem",
                  ssl_min_version=str(ssl.TLSVersion.TLSv1_3.value))
    client = redis_for.__wrapped__(url)
    cls = client.connection_pool.connection_class
    assert issubclass(cls, redis.SSLConnection)
    conn = client.connection_pool.make_connection()
    assert (conn.cert_reqs, conn.ca_certs, conn.ssl_min_version) == (
        ssl.CERT_NONE, "/etc/sunrise/ca.pem", ssl.TLSVersion.TLSv1_3)
    assert conn.socket_timeout == SOCKET_TIMEOUT_S
    _assert_gated(client)


def test_a_rediss_url_without_ssl_parameters_checks_the_certificate(redis_url):
    conn = redis_for.__wrapped__(tls_url(redis_url)).connection_pool.make_connection()
    assert isinstance(conn, redis.SSLConnection)
    assert (conn.cert_reqs, conn.check_hostname) == (ssl.CERT_REQUIRED, True)


def test_a_redis_url_gets_a_gated_plain_connection(redis_url):
    client = redis_for.__wrapped__(f"{redis_url}?socket_keepalive=false")  # a gate of its own
    assert not issubclass(client.connection_pool.connection_class, redis.SSLConnection)
    assert client.ping() is True
    conn = client.connection_pool.get_connection()
    assert conn._sock is not None and not isinstance(conn._sock, ssl.SSLSocket)
    client.connection_pool.release(conn)
    _assert_gated(client)


def test_a_unix_url_gets_a_gated_unix_socket_connection(tmp_path):
    path = tmp_path / "no-redis.sock"
    client = redis_for.__wrapped__(f"unix://{path}")
    assert issubclass(client.connection_pool.connection_class,
                      redis.UnixDomainSocketConnection)
    # It looks for the socket, not for a TCP port; and the failure opens the gate.
    with pytest.raises(redis.ConnectionError, match="No such file"):
        client.ping()
    with pytest.raises(redis.ConnectionError, match="Redis skipped"):
        client.ping()


@pytest.mark.parametrize("make", [
    redis_for.__wrapped__,
    lambda url: dedicated_redis(url, socket_timeout=1),
], ids=["pooled", "dedicated"])
def test_rediss_to_a_plain_redis_fails_rather_than_talking_in_the_clear(redis_url, make):
    """The handshake gets no answer from a server that speaks plain RESP: the call fails
    (a dedicated client connects as it is made) instead of going on unencrypted."""
    url = tls_url(redis_url, ssl_cert_reqs="none", socket_timeout="0.5")  # bounds the handshake
    with pytest.raises((redis.ConnectionError, redis.TimeoutError)):
        make(url).ping()


def test_dedicated_connections_have_maintenance_notifications_off(redis_url):
    client = dedicated_redis(redis_url, socket_timeout=1)
    try:
        assert client.ping() is True
        assert not client.connection_pool.maint_notifications_enabled()
    finally:
        client.close()


# -- over TLS, end to end (a TLS terminator in front of the test Redis) ------------------

def test_both_clients_talk_tls_and_check_the_certificate(redis_url, tls_proxy):
    url = tls_url(redis_url, tls_proxy.port, ssl_ca_certs=str(tls_proxy.cert_path))
    pooled = redis_for.__wrapped__(url)
    assert pooled.set("redis-client-test:tls", "sealed") is True
    conn = pooled.connection_pool.get_connection()
    try:
        assert isinstance(conn._sock, ssl.SSLSocket)
    finally:
        pooled.connection_pool.release(conn)
    dedicated = dedicated_redis(url, socket_timeout=1)
    try:
        assert dedicated.get("redis-client-test:tls") == "sealed"
        assert isinstance(dedicated.connection._sock, ssl.SSLSocket)
    finally:
        dedicated.close()
    pooled.connection_pool.disconnect()
    untrusted = redis_for.__wrapped__(tls_url(redis_url, tls_proxy.port))
    with pytest.raises(redis.ConnectionError, match="CERTIFICATE_VERIFY_FAILED"):
        untrusted.ping()


def test_the_check_sees_a_reply_waiting_in_the_tls_layer(redis_url, tls_proxy):
    """Two replies in one TLS record, read 7 bytes at a time: after the first ("+PONG"
    and its CRLF, exactly 7 bytes) the parser's buffer and the socket are both empty,
    and the second reply waits, decrypted, in the TLS layer: still pending."""
    url = tls_url(redis_url, tls_proxy.port, ssl_ca_certs=str(tls_proxy.cert_path),
                  socket_read_size="7")
    pool = redis_for.__wrapped__(url).connection_pool
    conn = pool.get_connection()
    try:
        conn.send_packed_command(conn.pack_commands([("PING",), ("ECHO", "second")]))
        assert conn.read_response() == "PONG"
        assert conn._sock.pending() > 0, "the setup no longer leaves bytes in the TLS layer"
        assert not select.select([conn._sock], [], [], 0)[0]
        assert _answers(conn) == (True, True)
        assert conn.read_response() == "second"
        assert _answers(conn) == (False, False)
    finally:
        pool.disconnect()
