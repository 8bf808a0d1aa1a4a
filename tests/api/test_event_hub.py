"""The API's event hub on real Redis: one reader, many subscriptions, each gets exactly
the events after its own position, a new one interrupts the blocked read, and Redis
trouble is reported instead of hanging."""
from __future__ import annotations

import uuid

import pytest
import redis

from api.event_hub import EventHub, HubUnavailable
from shared.redis_client import dedicated_redis
from tests.utils.held_jobs import event_log
from tests.utils.waiting import wait_until


@pytest.fixture
def log(settings):
    return event_log(settings)


@pytest.fixture
def hub(log, settings):
    return EventHub(log, lambda: dedicated_redis(settings.redis_url, socket_timeout=35),
                    block_ms=30_000, idle_s=0.5)


def new_object() -> str:
    return f"hub-test-{uuid.uuid4().hex}"


def test_each_subscription_gets_exactly_the_events_after_its_position(hub, log):
    obj = new_object()
    first = log.publish(obj, "llm_call", {"n": 1})
    second = log.publish(obj, "tool_call", {"n": 2})
    with hub.subscribe(obj) as everything, hub.subscribe(obj, first) as later:
        assert [e.id for e in everything.get(timeout=10)] == [first, second]
        assert [e.id for e in later.get(timeout=10)] == [second]
        third = log.publish(obj, "succeeded", {"n": 3})
        assert [e.id for e in everything.get(timeout=10)] == [third]
        assert [e.id for e in later.get(timeout=10)] == [third]
        assert everything.get(timeout=0.2) == []
        assert hub.watching() == 2
    assert hub.watching() == 0


def test_a_new_subscription_does_not_wait_for_the_blocked_read(hub, log):
    with hub.subscribe(new_object()):
        wait_until(lambda: hub._reading is not None)  # the reader blocks for 30 s
        obj = new_object()
        with hub.subscribe(obj) as sub:
            log.publish(obj, "started", {})
            # Well inside the 30 s the read in flight would otherwise still block.
            assert [e.event for e in sub.get(timeout=10)] == ["started"]


def test_the_reader_stops_when_nobody_listens_and_comes_back(hub, log):
    obj = new_object()
    with hub.subscribe(obj):
        pass
    wait_until(lambda: hub._reader is None, timeout=10)
    with hub.subscribe(obj) as sub:
        log.publish(obj, "queued", {})
        assert [e.event for e in sub.get(timeout=10)] == ["queued"]


def test_redis_trouble_is_reported_to_the_subscribers(log):
    # A real fault: nothing listens on port 1.
    hub = EventHub(log, lambda: redis.Redis.from_url("redis://127.0.0.1:1/0"), idle_s=0.5)
    with hub.subscribe(new_object()) as sub, pytest.raises(HubUnavailable):
        sub.get(timeout=10)
    wait_until(lambda: hub._reader is None, timeout=15)


@pytest.mark.parametrize("position", ["99999999999999999999-0", "0-18446744073709551616",
                                      "1-", "-1", "nope"])
def test_a_position_redis_cannot_read_is_refused_and_harms_no_other_subscription(hub, log,
                                                                                 position):
    # Redis ids are two unsigned 64-bit numbers. One subscriber's impossible position in
    # the shared XREAD would make Redis refuse the whole read, for every subscriber.
    obj = new_object()
    with hub.subscribe(obj) as healthy:
        log.publish(obj, "queued", {})
        assert [e.event for e in healthy.get(timeout=10)] == ["queued"]
        with pytest.raises(ValueError, match="not a stream id"):
            hub.subscribe(new_object(), position)
        assert hub.watching() == 1
        log.publish(obj, "started", {})
        assert [e.event for e in healthy.get(timeout=10)] == ["started"]


def test_the_largest_stream_id_is_a_valid_position(hub, log):
    obj = new_object()
    with hub.subscribe(obj, "18446744073709551615-18446744073709551615") as last, \
            hub.subscribe(obj) as everything:
        log.publish(obj, "queued", {})
        assert [e.event for e in everything.get(timeout=10)] == ["queued"]
        assert last.get(timeout=0.3) == []
