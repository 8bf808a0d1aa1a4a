"""Redis clients: one pooled client per URL per process for short commands, and
dedicated connections for long blocking reads -- every call bounded in time.

A Redis that is down refuses connections at once; a *hung* one (stopped, overloaded,
behind a dead network path) accepts them and never answers, so every call waits its
whole socket timeout. Unbounded, that would add 30 s per call on the request path (65 s
to a ``POST /v1/jobs``, past the bundled client's 40 s timeout). So:

- the pooled client's calls time out after ``SOCKET_TIMEOUT_S`` (every command sent
  on it is short: blocking reads use ``dedicated_redis``, whose timeout is given);
- after one call fails that way, the process's ``RedisGate`` for that URL skips Redis
  for ``SKIP_AFTER_FAILURE_S``: calls fail at once with ``redis.ConnectionError``, and
  every caller falls back exactly as it does with Redis down (the rate limiter lets
  the request through, progress events are skipped, the reaper enqueues later,
  long-polls and streams read the database). The first call after that tries again.

Both kinds of client connect the way the URL says, as redis-py would: TLS for
``rediss://`` (with its ``ssl_*`` query parameters), a Unix socket for ``unix://``.
"""
from __future__ import annotations

import functools
import hashlib
import logging
import select
import ssl
import sys
import threading
import time

import redis
from redis.connection import parse_url
from redis.exceptions import NoScriptError
from redis.maint_notifications import MaintNotificationsConfig

from shared.vendor.redis import idle_socket

logger = logging.getLogger(__name__)

# Enough for a worker's threads or a gevent API worker's bursts of short commands.
POOL_SIZE = 256
POOL_WAIT_S = 10
# Short commands answer in well under a millisecond; this is only a bound.
SOCKET_TIMEOUT_S = 2.0
CONNECT_TIMEOUT_S = 2.0
SKIP_AFTER_FAILURE_S = 5.0


class LuaScript:
    """A Lua script sent as ``EVALSHA`` itself, as redis-py's ``Script`` sends it but
    without its per-call work; a Redis that lost the script (a restart,
    ``SCRIPT FLUSH``) gets it again."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.sha = hashlib.sha1(source.encode()).hexdigest()

    def __call__(self, client: redis.Redis, keys: tuple | list, *args):
        try:
            return client.evalsha(self.sha, len(keys), *keys, *args)
        except NoScriptError:
            client.script_load(self.source)
            return client.evalsha(self.sha, len(keys), *keys, *args)


class RedisGate:
    """Remembers, for one Redis URL in this process, that a call just failed."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._until = 0.0
        self._lock = threading.Lock()

    def should_skip(self) -> bool:
        """True while calls should skip Redis (a call failed less than a moment ago)."""
        return time.monotonic() < self._until

    def check(self) -> None:
        """Raise ``redis.ConnectionError`` at once while Redis is to be skipped."""
        if self.should_skip():
            raise redis.ConnectionError(
                f"Redis skipped: a call failed under {SKIP_AFTER_FAILURE_S:g} s ago")

    def failed(self, exc: BaseException) -> None:
        with self._lock:
            first = not self.should_skip()
            self._until = time.monotonic() + SKIP_AFTER_FAILURE_S
        if first:
            logger.warning("Redis did not answer (%s); skipping it for %g s", exc,
                           SKIP_AFTER_FAILURE_S)


@functools.cache
def redis_gate(url: str) -> RedisGate:
    """This process's gate for ``url``."""
    return RedisGate(url)


class _Gated:
    """Mixed in before a redis-py connection class: the connection fails fast while its
    URL's gate is open, and opens it when a call times out or loses the connection.
    ``gate`` is set on a subclass per URL (``_gated_connection_class``).

    A mixin rather than a ``redis.Connection`` subclass, so it sits on whichever class
    the URL asks for: ``SSLConnection`` and ``UnixDomainSocketConnection`` replace how
    the socket is made, and a fixed base class would silently drop them."""

    gate: RedisGate

    def connect(self) -> None:
        self.gate.check()
        try:
            super().connect()
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            self.gate.failed(exc)
            raise

    def send_packed_command(self, command, check_health=True) -> None:
        self.gate.check()
        try:
            super().send_packed_command(command, check_health)
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            self.gate.failed(exc)
            raise

    def read_response(self, *args, **kwargs):
        try:
            return super().read_response(*args, **kwargs)
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            self.gate.failed(exc)
            raise

    def can_read(self, timeout: float = 0) -> bool:
        """redis-py's check, answered by one ``poll`` when nothing is buffered and the
        socket has nothing to read (the pool asks this of every connection it hands out).

        redis-py answers with a non-blocking read between two timeout changes: three
        system calls that each let go of the GIL, and among a worker's hundreds of
        threads each let-go is a hand-off. Data, an end of file or an error on the
        socket still goes to redis-py's own check, which reads it, or disconnects and
        raises, as it always would. Over TLS, bytes already decrypted but not yet read
        wait in the TLS layer where ``poll`` cannot see them: those go to redis-py too."""
        sock = idle_socket(self) if timeout == 0 else None
        if sock is not None and not _tls_pending(sock):
            poller = _os_poll()()
            poller.register(sock, select.POLLIN)
            if not poller.poll(0):
                return False
        return super().can_read(timeout)


@functools.cache
def _os_poll():
    """The operating system's ``select.poll``, also under gevent's monkey-patching (the
    API's gunicorn workers). gevent's starts a watcher and turns its hub even for a zero
    timeout, several times the real poll's cost on every command. A zero-timeout poll never blocks, so the real one is safe among greenlets."""
    monkey = sys.modules.get("gevent.monkey")
    return monkey.get_original("select", "poll") if monkey is not None else select.poll


def _tls_pending(sock) -> bool:
    """True if ``sock`` holds decrypted bytes that a read would return at once."""
    return isinstance(sock, ssl.SSLSocket) and sock.pending() > 0


def _gated_connection_class(url: str, gate: RedisGate) -> type[redis.connection.AbstractConnection]:
    """The connection class redis-py would use for ``url`` (its own ``parse_url``
    decides: ``SSLConnection`` for rediss://, ``UnixDomainSocketConnection`` for unix://),
    gated by ``gate``. The URL's query parameters (``ssl_ca_certs``, ``ssl_cert_reqs``,
    ...) still reach that class's constructor through the pool."""
    base = parse_url(url).get("connection_class", redis.Connection)
    return type(f"Gated{base.__name__}", (_Gated, base), {"gate": gate})


def _no_maint_notifications() -> MaintNotificationsConfig:
    """Maintenance notifications off, for every client we build: redis-py 8 turns them
    on ("auto") for RESP3, and while they are on its pool hands out a connection that
    still holds a reply (it expects pushes there), so a SET once read a PING's PONG and
    every later reply on that connection was one behind. Redis 7 does not send them (it
    answers the CLIENT command that enables them with an error, a wasted round trip per
    new connection); we do not use them."""
    return MaintNotificationsConfig(enabled=False)


@functools.cache
def redis_for(url: str) -> redis.Redis:
    """The process's pooled client for ``url``: short commands only (see module doc)."""
    # A blocking pool: a burst of greenlets or threads waits for a free connection
    # instead of failing with "Too many connections" (redis-py's default pool raises).
    pool = redis.BlockingConnectionPool.from_url(
        url, max_connections=POOL_SIZE, timeout=POOL_WAIT_S, decode_responses=True,
        connection_class=_gated_connection_class(url, redis_gate(url)),
        socket_connect_timeout=CONNECT_TIMEOUT_S, socket_timeout=SOCKET_TIMEOUT_S,
        health_check_interval=30, maint_notifications_config=_no_maint_notifications(),
    )
    return redis.Redis(connection_pool=pool)


def dedicated_redis(url: str, *, socket_timeout: float) -> redis.Redis:
    """A new client on ONE connection of its own, for a long blocking read that must not
    take a connection from the shared pool; ``socket_timeout`` must exceed the longest
    block it is used for. Not thread-safe: give it one user."""
    return redis.Redis.from_url(
        url, decode_responses=True, socket_connect_timeout=CONNECT_TIMEOUT_S,
        socket_timeout=socket_timeout, socket_keepalive=True, single_connection_client=True,
        maint_notifications_config=_no_maint_notifications(),
    )
