"""kombu's Redis transport, made to survive losing the broker while tasks are in flight.

Celery 5.7 (with kombu 5.7) reacts to a lost broker connection by collecting the
connection, which detaches the transport from its client, and then closing it. Two
things then raise ``AttributeError``, which Celery treats as unrecoverable, so every
busy worker process exits when Redis blips:

- closing the channel pushes the unacknowledged messages of the running tasks back
  onto the queue and needs a Redis client that can no longer be built;
- a task that finishes after the loss (or after the reconnect) acks its message on
  that dead channel.

Both become logged no-ops on a detached channel. Nothing is lost: the messages stay in
Redis's unacked set and come back after the visibility timeout (or are gone with a
Redis that restarted empty), a redelivered job is refused by its claim guard, and the
job rows in the database stay the source of truth that the reaper recovers from.

It is also cheaper per message: kombu builds a new ``redis.Redis`` (with its table of
~170 response callbacks) for every command it sends outside its consumer loop --
every publish. A channel here keeps one client on its connection pool instead
(redis-py clients are thread-safe: each command takes a pooled connection).
"""
from __future__ import annotations

import contextlib
import logging

from kombu.transport import redis as kombu_redis

logger = logging.getLogger(__name__)


def _detached(channel) -> bool:
    return getattr(channel.connection, "client", None) is None


class QoS(kombu_redis.QoS):
    def ack(self, delivery_tag) -> None:
        if _detached(self.channel):
            logger.warning("ack of message %s skipped: its broker connection is gone", delivery_tag)
            self._delivered.pop(delivery_tag, None)
            return
        super().ack(delivery_tag)

    def reject(self, delivery_tag, requeue=False) -> None:
        if _detached(self.channel):
            logger.warning("reject of message %s skipped: its broker connection is gone",
                           delivery_tag)
            self._delivered.pop(delivery_tag, None)
            return
        super().reject(delivery_tag, requeue=requeue)


class Channel(kombu_redis.Channel):
    QoS = QoS
    _command_client = None

    @contextlib.contextmanager
    def conn_or_acquire(self, client=None):
        yield client or self._reused_client()

    def _reused_client(self):
        client = self._command_client
        if client is None or client.connection_pool is not self.pool:  # a new pool: a new client
            client = self._command_client = self._create_client()
        return client

    def close(self) -> None:
        if not self.closed and self._qos is not None and _detached(self):
            logger.warning("broker connection lost with %d unacked message(s); leaving them to "
                           "the visibility timeout and the reaper", len(self._qos._delivered))
            self._qos.restore_at_shutdown = False
        super().close()


class Transport(kombu_redis.Transport):
    Channel = Channel
