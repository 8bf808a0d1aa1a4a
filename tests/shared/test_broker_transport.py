"""Our broker transport (shared/broker_transport.py): late acknowledgement is kombu's
own on a live channel, and a channel whose connection was collected (the broker was
lost with tasks in flight) acks and closes without raising, leaving the unacked
messages in Redis for the visibility timeout to restore."""
from __future__ import annotations

import contextlib
import uuid

import pytest

from shared.celery_factory import make_celery
from shared.config import Settings
from shared.redis_client import LuaScript


class _Delivered:
    """What QoS.append reads of a delivered message."""

    def __init__(self, tag: str):
        self.delivery_info = {"exchange": "", "routing_key": "chat"}
        self._raw = {"body": "e30=", "headers": {"id": tag}, "properties": {"delivery_tag": tag}}


@pytest.fixture
def channel(redis_url):
    with make_celery(Settings(redis_url=redis_url)).connection_for_write() as conn:
        channel = conn.default_channel
        yield channel
        with contextlib.suppress(Exception):
            channel.client.delete(channel.qos.unacked_key, channel.qos.unacked_index_key, "chat")


def _unacked(channel) -> set[str]:
    qos, client = channel.qos, channel.client
    assert {m.decode() for m in client.zrange(qos.unacked_index_key, 0, -1)} == \
        {k.decode() for k in client.hkeys(qos.unacked_key)}
    return {k.decode() for k in client.hkeys(qos.unacked_key)}


def _detach(channel) -> None:
    # What collecting the connection leaves: the transport without its client.
    channel.connection.client = None


def test_a_delivery_is_kept_unacked_until_its_ack(channel):
    first, second = str(uuid.uuid4()), str(uuid.uuid4())
    channel.qos.append(_Delivered(first), first)
    channel.qos.append(_Delivered(second), second)
    assert _unacked(channel) == {first, second}
    channel.qos.ack(first)
    assert _unacked(channel) == {second}
    channel.qos.ack(second)
    assert _unacked(channel) == set()


def test_an_ack_on_a_detached_channel_is_skipped_and_the_message_stays_unacked(channel, caplog):
    tag = str(uuid.uuid4())
    channel.qos.append(_Delivered(tag), tag)
    qos, client = channel.qos, channel.client
    _detach(channel)
    qos.ack(tag)
    qos.reject(tag)
    assert "its broker connection is gone" in caplog.text
    assert client.hexists(qos.unacked_key, tag)  # restored by the visibility timeout


def test_closing_a_detached_channel_leaves_its_unacked_messages_in_redis(channel, caplog):
    tag = str(uuid.uuid4())
    channel.qos.append(_Delivered(tag), tag)
    qos, client = channel.qos, channel.client
    _detach(channel)
    channel.close()
    assert channel.closed and "1 unacked message(s)" in caplog.text
    assert client.hexists(qos.unacked_key, tag) and not client.llen("chat")


def test_a_script_redis_does_not_know_is_loaded_and_run(redis_url):
    # A script of a source no Redis has seen: as after a restart, EVALSHA answers NOSCRIPT.
    script = LuaScript(f"-- {uuid.uuid4()}\nredis.call('SET', KEYS[1], ARGV[1])")
    with make_celery(Settings(redis_url=redis_url)).connection_for_write() as conn:
        client = conn.default_channel.client
        script(client, ("sunrise:test:script",), "ran")
        assert client.get("sunrise:test:script") == b"ran"
