"""The per-job event stream on real Redis."""
from __future__ import annotations

import uuid

import pytest

from shared.events import EventLog
from shared.redis_client import redis_for


@pytest.fixture
def log(redis_url) -> EventLog:
    return EventLog(redis_for(redis_url), maxlen=100, ttl_s=60)


def test_events_come_back_in_order_after_any_position(log):
    job = uuid.uuid4().hex
    ids = [log.publish(job, name, {"n": i}) for i, name in enumerate(["queued", "started"])]
    assert [(e.id, e.event, e.data) for e in log.read(job)] == [
        (ids[0], "queued", {"n": 0}), (ids[1], "started", {"n": 1})]
    assert [e.id for e in log.read(job, ids[0])] == [ids[1]]
    assert log.last_id(job) == ids[1]
    assert log.read(job, ids[1], block_ms=50) == []


def test_a_terminal_event_is_written_once(log):
    job = uuid.uuid4().hex
    assert log.publish(job, "succeeded", {"status": "succeeded"}) is not None
    assert log.publish(job, "failed", {"status": "failed"}) is None
    assert [e.event for e in log.read(job)] == ["succeeded"]
    assert log.has_terminal(job)


def test_streams_expire_and_are_capped(log, redis_url):
    job = uuid.uuid4().hex
    for i in range(300):
        log.publish(job, "tool_call", {"i": i})
    client = redis_for(redis_url)
    key = f"sunrise:events:job:{job}"
    assert 0 < client.ttl(key) <= 60
    assert client.xlen(key) < 300  # approximate trimming keeps it near maxlen


def test_a_batch_is_written_in_order_and_guarded_by_its_terminal_event(log, redis_url):
    job = uuid.uuid4().hex
    last = log.publish_many(job, [("llm_call", {"round": 0}), ("thinking", {"text": "t"}),
                                  ("succeeded", {"status": "succeeded"})])
    events = log.read(job)
    assert [e.event for e in events] == ["llm_call", "thinking", "succeeded"]
    assert events[-1].id == last and events[0].data == {"round": 0}
    assert 0 < redis_for(redis_url).ttl(f"sunrise:events:job:{job}") <= 60
    # A second ending writes nothing, not even the progress events riding with it.
    assert log.publish_many(job, [("llm_call", {"round": 1}), ("failed", {})]) is None
    assert [e.event for e in log.read(job)] == ["llm_call", "thinking", "succeeded"]


def test_a_redis_that_lost_the_script_is_given_it_again(log, redis_url):
    """A restarted (or SCRIPT FLUSHed) Redis answers NOSCRIPT: the publish loads the
    script and writes the events, once each."""
    job = uuid.uuid4().hex
    log.publish(job, "started", {"attempt": 1})
    redis_for(redis_url).script_flush()  # every redis-py script reloads itself the same way
    last = log.publish_many(job, [("llm_call", {"round": 1}), ("succeeded", {"n": 1})])
    assert [(e.event, e.data) for e in log.read(job)] == [
        ("started", {"attempt": 1}), ("llm_call", {"round": 1}), ("succeeded", {"n": 1})]
    assert log.last_id(job) == last and log.has_terminal(job)
