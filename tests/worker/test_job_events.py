"""A running job's events on real Redis: progress events wait for the next event that
matters (or a flush, or a read's end once the period is over) and then travel in order,
in one round trip; the answer text is read out of the reply only when a trip is due,
and the read that completes a reply sends nothing of its own."""
from __future__ import annotations

import itertools
import json
import logging
import uuid

import redis

from shared.events import EventLog
from shared.redis_client import redis_for
from tests.utils.jobs import create_job
from worker.agent.answer_stream import AnswerStreamer
from worker.jobs.events import BatchingSink, BestEffortSink, job_sink
from worker.jobs.runner import JobRunner


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
    """A real ``EventLog`` that counts its round trips and keeps what each carried."""

    trips = 0

    def publish_many(self, object_id, events):
        self.trips += 1
        self.batches = [*getattr(self, "batches", []), [event for event, _ in events]]
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


def test_the_answer_text_is_read_only_when_a_trip_is_due_and_leaves_as_it_is_then(redis_url):
    log, now = CountingLog(redis_for(redis_url), ttl_s=60), [100.0]
    sink, job = BatchingSink(log, flush_every_s=0.1, clock=lambda: now[0]), uuid.uuid4().hex
    emitted: list[str] = []

    def publish(text: str) -> None:
        emitted.append(text)
        sink.publish(job, "answer_delta", {"text": text})

    streamer = AnswerStreamer(publish)
    sink.publish(job, "started", {})
    words = [f"w{i}" for i in range(40)]
    streamer.feed('{"answerText": "')
    for i, word in enumerate(words):  # 40 reads of the model's stream, 10 ms apart
        now[0] += 0.01
        streamer.feed(word if i == 0 else f" {word}")
        trips = log.trips
        sink.flush_if_due(job, streamer.flush)
        if log.trips > trips:  # this read made a trip: with all the text so far
            assert emitted[-1] == " ".join(words[:i + 1])
    now[0] += 0.1
    streamer.feed('", "charts": []}')
    sink.flush_if_due(job, streamer.flush)  # due, but the answer text is no newer: no trip
    assert log.trips == 1 + len(emitted) and 3 <= len(emitted) <= 5, emitted
    streamer.flush()  # the reply is complete
    sink.publish(job, "succeeded", {"status": "succeeded"})
    texts = [e.data["text"] for e in log.read(job) if e.event == "answer_delta"]
    assert texts == emitted, "parsed once per trip, each text sent"
    assert texts[-1] == " ".join(words)


def test_a_two_round_job_makes_three_round_trips(settings, fake_llm, redis_url):
    """Started; the tool round's thinking, call and query; the answer round with the
    end. Even when every read of the model's stream may send (no period), a read that
    completes a reply leaves its thinking and text to travel with the round's end."""
    marker = fake_llm.scenario("three-trips", [
        {"thinking": "Count the flights.",
         "tool_calls": [{"sql": "SELECT count(*) AS n FROM flights"}]},
        {"thinking": "That is the answer.",
         "text": json.dumps({"answerText": "There were 336,776 flights.", "charts": []})},
    ])
    log = CountingLog(redis_for(redis_url), ttl_s=60)
    for every_ms in (0, 10_000):
        log.trips, log.batches = 0, []
        job_id, _ = create_job(settings, f"{marker} how many flights?")
        runner = JobRunner(settings.model_copy(update={"event_flush_ms": every_ms}), events=log)
        assert runner.run(job_id) == "succeeded"
        assert log.batches == [["started"], ["thinking", "llm_call", "tool_call"],
                               ["thinking", "answer_delta", "llm_call", "succeeded"]], every_ms
        assert log.read(job_id)[-3].data == {"text": "There were 336,776 flights."}


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
    logger = logging.getLogger("worker.jobs.events")
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
