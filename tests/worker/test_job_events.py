"""A running job's events on real Redis: progress events wait for the next event that
matters (or a flush) and then travel in order, in one round trip."""
from __future__ import annotations

import logging
import uuid

import redis

from shared.events import EventLog
from shared.redis_client import redis_for
from worker.job_events import BatchingSink, BestEffortSink, job_sink


def test_held_events_travel_with_the_next_event_that_matters(redis_url):
    log = EventLog(redis_for(redis_url), ttl_s=60)
    sink, job = job_sink(log), uuid.uuid4().hex
    assert isinstance(sink, BatchingSink)
    sink.publish(job, "started", {})
    sink.publish(job, "llm_call", {"round": 0})
    sink.publish(job, "thinking", {"text": "hm"})
    assert [e.event for e in log.read(job)] == ["started"]
    sink.publish(job, "tool_call", {"round": 0})
    assert [e.event for e in log.read(job)] == ["started", "llm_call", "thinking", "tool_call"]
    sink.publish(job, "answer_delta", {"text": "U"})
    sink.flush(job)  # the end of one read of the model's stream
    sink.publish(job, "llm_call", {"round": 1})
    sink.publish(job, "succeeded", {"status": "succeeded"})
    assert [e.event for e in log.read(job)][4:] == ["answer_delta", "llm_call", "succeeded"]
    assert sink.flush(job) is None  # nothing left held


def test_a_failed_publish_is_logged_not_raised():
    log = EventLog(redis.Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.5))
    sink = job_sink(log)
    # A handler of its own: the CLI tests reconfigure logging, so caplog may not see it.
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append
    logger = logging.getLogger("worker.job_events")
    was = logger.disabled, logger.level
    logger.addHandler(handler)
    logger.disabled, logger.level = False, logging.WARNING
    try:
        sink.publish("j", "llm_call", {})
        assert sink.publish("j", "succeeded", {}) is None
    finally:
        logger.removeHandler(handler)
        logger.disabled, logger.level = was
    assert "llm_call, succeeded events not published" in records[0].getMessage()


def test_a_sink_without_batches_gets_every_event_at_once():
    seen = []

    class Printer:
        def publish(self, object_id, event, data):
            seen.append(event)

    sink = job_sink(Printer())
    assert isinstance(sink, BestEffortSink)
    sink.publish("j", "llm_call", {})
    assert seen == ["llm_call"]
