"""kombu's Redis transport, made to survive losing the broker while tasks are in flight.

Celery 5.7 (with kombu 5.7) reacts to a lost broker connection by collecting the
connection, which detaches the transport from its client, and then closing it. Two
things then raise ``AttributeError``, which Celery treats as unrecoverable, so every
busy worker process exits when Redis blips (the failure kombu's
https://github.com/celery/kombu/issues/582 reports: a closing channel builds a Redis
client from a connection that is gone):

- closing the channel pushes the unacknowledged messages of the running tasks back
  onto the queue and needs a Redis client that can no longer be built;
- a task that finishes after the loss (or after the reconnect) acks its message on
  that dead channel.

Both become logged no-ops on a detached channel. Nothing is lost: the messages stay in
Redis's unacked set and come back after the visibility timeout (or are gone with a
Redis that restarted empty), a redelivered job is refused by its claim guard, and the
job rows in the database stay the source of truth that the reaper recovers from. On a
live channel, acknowledgement and restore are kombu's own.

A channel also keeps one Redis client on its connection pool for the commands it sends
outside its consumer loop (publish, ack), where kombu builds a new ``redis.Redis``
(with its table of ~170 response callbacks) for each; redis-py clients are
thread-safe: each command takes a pooled connection.
"""
from __future__ import annotations

import contextlib
import logging

from kombu.transport import redis as kombu_redis

from shared.vendor.kombu import channel_qos, forget_delivery, new_client, unacked_count

logger = logging.getLogger(__name__)


def _detached(channel) -> bool:
    return getattr(channel.connection, "client", None) is None


class QoS(kombu_redis.QoS):
    def ack(self, delivery_tag) -> None:
        if _detached(self.channel):
            logger.warning("ack of message %s skipped: its broker connection is gone", delivery_tag)
            forget_delivery(self, delivery_tag)
            return
        super().ack(delivery_tag)

    def reject(self, delivery_tag, requeue=False) -> None:
        if _detached(self.channel):
            logger.warning("reject of message %s skipped: its broker connection is gone",
                           delivery_tag)
            forget_delivery(self, delivery_tag)
            return
        super().reject(delivery_tag, requeue=requeue)


class Channel(kombu_redis.Channel):
    QoS = QoS
    command_client = None

    @contextlib.contextmanager
    def conn_or_acquire(self, client=None):
        yield client or self.client_for_commands()

    def client_for_commands(self):
        """The channel's client for commands outside the consumer loop (publish, ack)."""
        client = self.command_client
        if client is None or client.connection_pool is not self.pool:  # a new pool: a new client
            client = self.command_client = new_client(self)
        return client

    def close(self) -> None:
        qos = channel_qos(self)
        if not self.closed and qos is not None and _detached(self):
            logger.warning("broker connection lost with %d unacked message(s); leaving them to "
                           "the visibility timeout and the reaper", unacked_count(qos))
            qos.restore_at_shutdown = False
        super().close()


class Transport(kombu_redis.Transport):
    Channel = Channel
