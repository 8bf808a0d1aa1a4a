"""A running job's events on real Redis: progress events wait for the next event that
matters (or a flush, or a read's end once the period is over) and then travel in order,
in one round trip."""
from __future__ import annotations

import itertools
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


class CountingLog(EventLog):
    """A real ``EventLog`` that counts its round trips."""

    trips = 0

    def publish_many(self, object_id, events):
        self.trips += 1
        return super().publish_many(object_id, events)


def test_many_small_reads_send_the_answer_at_most_once_per_period(redis_url):
    log, now = CountingLog(redis_for(redis_url), ttl_s=60), [100.0]
    sink, job = BatchingSink(log, flush_every_s=0.1, clock=lambda: now[0]), uuid.uuid4().hex
    sink.publish(job, "started", {})
    words = [f"w{i}" for i in range(40)]
    for i in range(len(words)):  # 40 reads of the model's stream, 10 ms apart
        now[0] += 0.01
        sink.publish(job, "answer_delta", {"text": " ".join(words[:i + 1])})
        sink.flush_if_due(job)
    sink.publish(job, "llm_call", {"round": 0})
    sink.publish(job, "succeeded", {"status": "succeeded"})
    events = log.read(job)
    texts = [e.data["text"] for e in events if e.event == "answer_delta"]
    assert 3 <= len(texts) <= 5, texts  # one per 100 ms of 400, not one per read
    assert log.trips <= len(texts) + 2  # started, the answer's, the end's (maybe with the answer)
    assert all(b.startswith(a) and len(b) > len(a) for a, b in itertools.pairwise(texts))
    assert texts[-1] == " ".join(words), "every character, in order, before the end"
    assert [e.event for e in events][-2:] == ["llm_call", "succeeded"]
    assert sink.flush(job) is None and job not in sink._sent_at  # an ended job is forgotten


def test_a_fast_reply_goes_out_with_the_end_and_no_period_sends_every_read(redis_url):
    log = CountingLog(redis_for(redis_url), ttl_s=60)
    fast, job = BatchingSink(log, flush_every_s=10), uuid.uuid4().hex
    fast.publish(job, "started", {})
    for text in ("a", "a b", "a b c"):
        fast.publish(job, "answer_delta", {"text": text})
        fast.flush_if_due(job)
    fast.publish(job, "succeeded", {})
    assert [(e.event, e.data.get("text")) for e in log.read(job)] == [
        ("started", None), ("answer_delta", "a b c"), ("succeeded", None)]
    assert log.trips == 2

    every, job = BatchingSink(log, flush_every_s=0), uuid.uuid4().hex
    for text in ("a", "a b"):
        every.publish(job, "answer_delta", {"text": text})
        every.flush_if_due(job)
    assert [e.data["text"] for e in log.read(job)] == ["a", "a b"]
    assert not every._sent_at


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
