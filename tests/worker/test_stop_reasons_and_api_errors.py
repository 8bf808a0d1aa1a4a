"""Issue 13, items 1-5: what the real Claude API does that the loop must survive, against
the (now strict) offline model over HTTP, real DuckDB and real MariaDB.

Each test failed before the fix: the offline model then accepted what the API refuses
(empty content, whitespace text blocks) or could not produce the reply at all.
"""
from __future__ import annotations

import json

import pytest
from prometheus_client import CollectorRegistry
from sqlalchemy import select

from shared.db import session_scope
from shared.metrics import Metrics
from shared.models import Message
from tests.utils.jobs import create_job, entries_with, job_view, llm_calls, marker, requests_with
from worker.agent.stop_reasons import CONTINUE_PROMPT

COUNT = "SELECT count(*) AS n FROM flights"


def answer(text: str) -> str:
    return json.dumps({"answerText": text, "charts": []})


def run(runner, settings, question: str, **kw) -> dict:
    job_id, _ = create_job(settings, question, **kw)
    runner.run(job_id)
    return job_view(settings, job_id)


def stored_answers(settings, conversation_id: str) -> list[str]:
    with session_scope(settings.database_url) as s:
        return list(s.scalars(select(Message.text).where(
            Message.conversation_id == conversation_id, Message.role == "assistant")))


# -- 1. an empty final reply -------------------------------------------------------------

def test_an_empty_final_reply_gets_one_continuation_and_the_answer(runner, settings, fake_llm):
    tag = marker()
    scenario = fake_llm.scenario("empty-once", [
        {"tool_calls": [{"sql": COUNT}]},
        {"empty": True},
        {"text": answer("There were 336,776 flights.")},
    ])
    job = run(runner, settings, f"{scenario} {tag}")
    assert job["status"] == "succeeded", job["error"]
    assert job["result"]["answer_text"] == "There were 336,776 flights."
    third = requests_with(fake_llm, tag)[2]["messages"]
    # The prompt joins the user turn of tool results; no empty assistant turn is sent.
    assert [m["role"] for m in third] == ["user", "assistant", "user"]
    assert third[-1]["content"][-1]["text"] == CONTINUE_PROMPT
    assert [c.round for c in llm_calls(settings, job["job_id"])] == [0, 1, 2]


def test_a_conversation_survives_an_empty_final_reply(runner, settings, fake_llm):
    fake_llm.fault("empty_end_turn", count=2)  # the first reply and the continuation
    first = run(runner, settings, f"How many flights did each carrier fly? {marker()}")
    assert first["status"] == "failed" and first["error"]["code"] == "empty_answer"
    conversation = first["conversation_id"]
    assert stored_answers(settings, conversation) == [], "an empty answer is never stored"
    tag = marker()
    second = run(runner, settings, f"How many flights did each carrier fly? {tag}",
                 conversation_id=conversation)
    assert second["status"] == "succeeded", second["error"]
    sent = requests_with(fake_llm, tag)[0]["messages"]
    assert [m["role"] for m in sent] == ["user"], "the failed turn is not replayed"


def test_a_blank_answer_stored_in_the_past_is_never_replayed(runner, settings, fake_llm):
    first = run(runner, settings, f"How many flights? {marker()}")
    with session_scope(settings.database_url) as s:  # what earlier versions stored
        s.execute(Message.__table__.update().where(Message.job_id == first["job_id"],
                                                   Message.role == "assistant").values(text=""))
    tag = marker()
    second = run(runner, settings, f"And by carrier? {tag}",
                 conversation_id=first["conversation_id"])
    assert second["status"] == "succeeded", second["error"]
    assert len(requests_with(fake_llm, tag)[0]["messages"]) == 1


# -- 2. empty text blocks ------------------------------------------------------------------

def test_whitespace_text_blocks_are_not_replayed(runner, settings, fake_llm):
    # Sonnet 4.6 keeps a tool call's lead-in text as text (no between-tools thinking).
    sonnet_46 = type(runner)(settings.model_copy(update={"model": "claude-sonnet-4-6"}))
    tag = marker()
    scenario = fake_llm.scenario("blank-lead-in", [
        {"text": " \n ", "tool_calls": [{"sql": COUNT}]},
        {"text": answer("Counted.")},
    ])
    job_id, _ = create_job(settings.model_copy(update={"model": "claude-sonnet-4-6"}),
                           f"{scenario} {tag}")
    sonnet_46.run(job_id)
    job = job_view(settings, job_id)
    assert job["status"] == "succeeded", job["error"]
    replayed = requests_with(fake_llm, tag)[1]["messages"][1]["content"]
    assert [b["type"] for b in replayed if b["type"] != "thinking"] == ["tool_use"]


# -- 3. an error event in the middle of a stream ---------------------------------------------

def test_a_stream_that_breaks_mid_way_is_retried_and_counted(settings, fake_llm):
    from worker.jobs.runner import JobRunner

    registry = CollectorRegistry()
    runner = JobRunner(settings, metrics=Metrics(registry))
    tag = marker()
    fake_llm.fault("stream_error", count=1)
    job = run(runner, settings, f"How many flights did each carrier fly? {tag}")
    assert job["status"] == "succeeded", job["error"]
    assert job["usage"]["llm_retries"] == 1
    statuses = [e["status"] for e in entries_with(fake_llm, tag)]
    assert len(statuses) == 3, "round 0 twice (broken, retried), then round 1"
    assert registry.get_sample_value("sunrise_llm_stream_retries_total", {
        "model": settings.model, "error_type": "overloaded_error"}) == 1


def test_a_stream_that_keeps_breaking_fails_as_unavailable_after_the_budget(runner, settings,
                                                                          fake_llm):
    tag = marker()
    fake_llm.fault("stream_error", count=10)
    job = run(runner, settings, f"How many flights? {tag}")
    assert job["status"] == "failed" and job["error"]["code"] == "llm_unavailable"
    budget = settings.llm_max_retries
    assert f"after {budget} retries" in job["error"]["message"]
    assert len(entries_with(fake_llm, tag)) == budget + 1
    assert job["usage"]["llm_retries"] == budget


# -- 4. model_context_window_exceeded --------------------------------------------------------

def test_a_context_window_cut_off_gets_the_canned_truncated_answer(runner, settings, fake_llm):
    scenario = fake_llm.scenario("window", [
        {"stop_reason": "model_context_window_exceeded", "text": '{"answerText": "The'}])
    job = run(runner, settings, f"{scenario} {marker()}")
    assert job["status"] == "succeeded", job["error"]
    assert job["result"]["parse_path"] == "truncated" and job["result"]["truncated"] is True
    assert "narrower" in job["result"]["answer_text"]


# -- 5. statuses that no retry can fix ----------------------------------------------------------

@pytest.mark.parametrize("status,code,cause", [
    ("401", "llm_auth", "ANTHROPIC_API_KEY"),
    ("403", "llm_auth", "permission"),
    ("404", "llm_model_not_found", "SUNRISE_MODEL"),
    ("413", "llm_request_too_large", "narrower question"),
])
def test_non_retryable_statuses_fail_at_once_with_a_cause(runner, settings, fake_llm, status,
                                                          code, cause):
    tag = marker()
    fake_llm.fault(status, count=5)
    job = run(runner, settings, f"How many flights? {tag}")
    assert job["status"] == "failed" and job["error"]["code"] == code
    assert cause in job["error"]["message"] and "try again shortly" not in job["error"]["message"]
    assert len(entries_with(fake_llm, tag)) == 1, "not retried"


def test_an_unknown_model_is_llm_model_not_found(settings, fake_llm):
    from worker.jobs.runner import JobRunner

    wrong = settings.model_copy(update={"model": "claude-sonnet-9-typo"})
    job_id, _ = create_job(wrong, f"How many flights? {marker()}")
    JobRunner(wrong).run(job_id)
    job = job_view(settings, job_id)
    assert job["error"]["code"] == "llm_model_not_found"
    assert "claude-sonnet-9-typo" in job["error"]["message"]


def test_a_refusal_fails_refused_with_the_models_text(runner, settings, fake_llm):
    scenario = fake_llm.scenario("refuse-text", [
        {"stop_reason": "refusal", "text": "I can't help with that request."}])
    job = run(runner, settings, f"{scenario} {marker()}")
    assert job["status"] == "failed" and job["error"]["code"] == "refused"
    assert "I can't help with that request." in job["error"]["message"]


def test_without_a_key_or_base_url_a_job_fails_at_once_with_llm_auth(settings, fake_llm):
    from worker.jobs.runner import JobRunner

    keyless = settings.model_copy(update={"anthropic_api_key": None, "anthropic_base_url": None})
    tag = marker()
    job_id, _ = create_job(keyless, f"How many flights? {tag}")
    JobRunner(keyless).run(job_id)
    job = job_view(settings, job_id)
    assert job["status"] == "failed" and job["error"]["code"] == "llm_auth"
    assert "ANTHROPIC_API_KEY is not set" in job["error"]["message"]
    assert "--offline" in job["error"]["message"]
    assert job["usage"]["llm_ms"] == 0, "no call was attempted"
