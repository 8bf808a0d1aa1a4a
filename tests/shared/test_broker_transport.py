"""Our transport's late-acknowledgement bookkeeping (one script each way) leaves Redis as
kombu's own MULTI/EXEC pipelines do: what a delivered message writes is what kombu
writes and restores from, and an ack removes it."""
from __future__ import annotations

import uuid

from kombu.transport import redis as kombu_redis

from shared.celery_factory import make_celery
from shared.config import Settings
from shared.redis_client import LuaScript


class _Delivered:
    """What QoS.append reads of a delivered message."""

    def __init__(self, tag: str):
        self.delivery_info = {"exchange": "", "routing_key": "chat"}
        self._raw = {"body": "e30=", "headers": {"id": tag}, "properties": {"delivery_tag": tag}}


def test_append_and_ack_write_what_kombu_writes(redis_url):
    with make_celery(Settings(redis_url=redis_url)).connection_for_write() as conn:
        channel = conn.default_channel
        qos, client = channel.qos, channel.client
        ours, kombus = str(uuid.uuid4()), str(uuid.uuid4())
        qos.append(_Delivered(ours), ours)
        kombu_redis.QoS.append(qos, _Delivered(kombus), kombus)

        stored = client.hgetall(qos.unacked_key)
        assert stored[ours.encode()] == stored[kombus.encode()].replace(kombus.encode(), ours.encode())
        assert {m.decode() for m in client.zrange(qos.unacked_index_key, 0, -1)} == {ours, kombus}
        assert set(qos._delivered) == {ours, kombus}

        qos.ack(ours)
        assert client.hkeys(qos.unacked_key) == [kombus.encode()]
        assert client.zrange(qos.unacked_index_key, 0, -1) == [kombus.encode()]
        assert qos._dirty == {ours}  # kombu forgets acknowledged messages lazily
        qos.ack(kombus)
        assert not client.exists(qos.unacked_key, qos.unacked_index_key)


def test_a_script_redis_does_not_know_is_loaded_and_run(redis_url):
    # A script of a source no Redis has seen: as after a restart, EVALSHA answers NOSCRIPT.
    script = LuaScript(f"-- {uuid.uuid4()}\nredis.call('SET', KEYS[1], ARGV[1])")
    with make_celery(Settings(redis_url=redis_url)).connection_for_write() as conn:
        client = conn.default_channel.client
        script(client, ("sunrise:test:script",), "ran")
        assert client.get("sunrise:test:script") == b"ran"
