"""kombu's channel and QoS state that ``shared/broker_transport.py`` reads.

The transport keeps a Celery worker alive when the broker connection is collected with
tasks in flight (see that module); to do so it reads which deliveries a channel still
holds unacknowledged and builds the channel's Redis client, neither of which kombu
names publicly.
"""
from __future__ import annotations

LIBRARY = "kombu"
VERIFIED_VERSION = "5.7.0"


def forget_delivery(qos, delivery_tag) -> None:
    """Drop ``delivery_tag`` from ``qos``'s unacknowledged deliveries (nothing sent)."""
    qos._delivered.pop(delivery_tag, None)


def unacked_count(qos) -> int:
    """How many deliveries ``qos`` holds unacknowledged."""
    return len(qos._delivered)


def channel_qos(channel):
    """The channel's QoS, or None if it never made one (``channel.qos`` would make it)."""
    return channel._qos


def new_client(channel):
    """A new ``redis.Redis`` on the channel's connection pool, as kombu builds one."""
    return channel._create_client()
