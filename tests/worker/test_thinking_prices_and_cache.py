"""Issue 13, items 6-8: thinking on by default, prices from the current list, and the
prompt cache per model, against the strict offline model over HTTP."""
from __future__ import annotations

import itertools
import json
import logging
from decimal import Decimal

from sqlalchemy import select

from shared.db import session_scope
from shared.models import LlmCall
from tests.utils.jobs import create_job, entries_with, job_view, llm_calls, marker, requests_with

COUNT = "SELECT count(*) AS n FROM flights"


def answer(text: str) -> str:
    return json.dumps({"answerText": text, "charts": []})


def run(runner, settings, question: str) -> dict:
    job_id, _ = create_job(settings, question)
    runner.run(job_id)
    return job_view(settings, job_id)


# -- 6. thinking ----------------------------------------------------------------------------

def test_every_round_thinks_and_its_blocks_are_replayed_unmodified(runner, settings, fake_llm,
                                                                  fake_llm_server):
    tag = marker()
    scenario = fake_llm.scenario("think-every-round", [
        {"thinking": "First the total.", "tool_calls": [{"sql": COUNT}]},
        {"thinking": "Now by carrier.", "tool_calls": [
            {"sql": "SELECT carrier, count(*) AS n FROM flights GROUP BY 1"}]},
        {"thinking": "Enough to answer.", "text": answer("UA flew the most.")},
    ])
    job = run(runner, settings, f"{scenario} {tag}")
    assert job["status"] == "succeeded", job["error"]
    requests = requests_with(fake_llm, tag)
    assert len(requests) == 3
    for request in requests:  # the model's own rules, from the capability table
        assert request["model"] == "claude-sonnet-5-5"
        assert request["thinking"] == {"type": "adaptive", "display": "summarized"}
        assert request["output_config"] == {"effort": "medium"}
        assert request["max_tokens"] >= 16_000
    last = requests[-1]["messages"]
    thoughts = [b for m in last if m["role"] == "assistant" for b in m["content"]
                if b["type"] == "thinking"]
    assert [b["thinking"] for b in thoughts] == ["First the total.", "Now by carrier."]
    signer = fake_llm_server.state.builder._signer
    assert all(signer.valid("claude-sonnet-5-5", b["thinking"], b["signature"])
               for b in thoughts), "byte-identical: the signature still matches the text"
    reported = [e["usage"] for e in entries_with(fake_llm, tag)]
    assert job["usage"]["output_tokens"] == sum(u["output_tokens"] for u in reported)
    assert all(u["output_tokens"] > u["output_tokens_details"]["thinking_tokens"] > 0
               for u in reported), "thinking is billed inside output_tokens"


def test_thinking_never_enters_the_conversation_history(runner, settings, fake_llm):
    first = run(runner, settings, f"How many flights did each carrier fly? {marker()}")
    tag = marker()
    job_id, _ = create_job(settings, f"And by origin? {tag}",
                           conversation_id=first["conversation_id"])
    runner.run(job_id)
    history = requests_with(fake_llm, tag)[0]["messages"][:2]
    assert [m["role"] for m in history] == ["user", "assistant"]
    assert "thinking" not in json.dumps(history) and "signature" not in json.dumps(history)


def test_thinking_off_on_sonnet_5_5_sends_between_tools_not_disabled(settings, fake_llm):
    from worker.jobs.runner import JobRunner

    off = settings.model_copy(update={"thinking": "off", "effort": "max"})
    tag = marker()
    job_id, _ = create_job(off, f"How many flights did each carrier fly? {tag}")
    JobRunner(off).run(job_id)
    job = job_view(settings, job_id)
    assert job["status"] == "succeeded", job["error"]
    first = requests_with(fake_llm, tag)[0]
    # 'disabled' is a 400 on Sonnet 5.5; between_tools is its lowest setting, at most 'high'.
    assert first["thinking"] == {"type": "between_tools"}
    assert first["output_config"] == {"effort": "high"}


def test_a_long_think_fits_the_default_max_tokens(runner, settings, fake_llm):
    long_thought = "Let me weigh every table and join carefully. " * 1000  # ~11k tokens
    scenario = fake_llm.scenario("long-think", [
        {"thinking": long_thought, "tool_calls": [{"sql": COUNT}]},
        {"text": answer("336,776 flights.")},
    ])
    job = run(runner, settings, f"{scenario} {marker()}")
    assert job["status"] == "succeeded" and job["result"]["truncated"] is False, job


# -- 7. prices ---------------------------------------------------------------------------------

def test_sonnet_5_5_is_billed_at_the_current_list_price(runner, settings, fake_llm):
    tag = marker()
    job = run(runner, settings, f"How many flights did each carrier fly? {tag}")
    expected = Decimal(0)
    for u in (e["usage"] for e in entries_with(fake_llm, tag)):
        writes_1h = u["cache_creation"]["ephemeral_1h_input_tokens"]
        expected += (u["input_tokens"] * Decimal(2) + u["output_tokens"] * Decimal(10)
                     + (u["cache_creation_input_tokens"] - writes_1h) * Decimal("2.50")
                     + writes_1h * Decimal(4)
                     + u["cache_read_input_tokens"] * Decimal("0.10")) / 1_000_000
    assert abs(Decimal(str(job["usage"]["cost_usd"])) - expected) < Decimal("0.00000002")


def test_an_unpriced_model_costs_null_and_warns_once(settings, fake_llm, caplog, monkeypatch):
    from api.services.usage import usage_report
    from shared import claude_models
    from worker.jobs.runner import JobRunner

    monkeypatch.setattr(claude_models, "_warned", set())
    # Listed by the installed SDK (so the API serves it) but on no price list we read.
    unpriced = settings.model_copy(update={"model": "claude-fable-5-2"})
    runner = JobRunner(unpriced)
    caplog.set_level(logging.WARNING, logger="shared.claude_models")
    jobs = []
    for _ in range(2):
        job_id, _ = create_job(unpriced, f"How many flights? {marker()}", tenant="unpriced")
        runner.run(job_id)
        jobs.append(job_view(settings, job_id))
    assert all(j["status"] == "succeeded" for j in jobs), jobs
    assert [j["usage"]["cost_usd"] for j in jobs] == [None, None]
    assert all(c.cost_usd is None for c in llm_calls(settings, jobs[0]["job_id"]))
    warnings = [r for r in caplog.records if "claude-fable-5-2" in r.getMessage()]
    assert len(warnings) == 1, "warned once per process, not per call"
    with session_scope(settings.database_url) as s:
        tenant_id = s.scalar(select(LlmCall.tenant_id).where(
            LlmCall.job_id == jobs[0]["job_id"]))
        report = usage_report(s, tenant_id, "model", None, None)
    (item,) = [i for i in report["items"] if i["key"] == "claude-fable-5-2"]
    assert item["cost_usd"] is None and item["unpriced_calls"] == item["llm_calls"] > 0


def test_sunrise_prices_still_overrides_the_table(settings, fake_llm):
    from shared.claude_models import ModelPrice
    from worker.jobs.runner import JobRunner

    free = settings.model_copy(update={"prices": {
        "claude-sonnet-5-5": ModelPrice(input=Decimal(0), output=Decimal(0), cache_write=Decimal(0),
                                        cache_write_1h=Decimal(0), cache_read=Decimal(0))}})
    job_id, _ = create_job(free, f"How many flights? {marker()}")
    JobRunner(free).run(job_id)
    assert job_view(settings, job_id)["usage"]["cost_usd"] == 0.0


# -- 8. the prompt cache, per model -------------------------------------------------------------

def test_each_round_reads_the_previous_rounds_prefix(runner, settings, fake_llm):
    tag = marker()
    scenario = fake_llm.scenario("cache-rounds", [
        {"tool_calls": [{"sql": COUNT}]},
        {"tool_calls": [{"sql": "SELECT count(*) AS n FROM airlines"}]},
        {"text": answer("Counted twice.")},
    ])
    run(runner, settings, f"{scenario} {tag}")
    usage = [e["usage"] for e in entries_with(fake_llm, tag)]
    # Round n's breakpoint (the newest message) is found by round n+1 within the
    # 20-block lookback, so each call reads all that the one before it wrote.
    for before, after in itertools.pairwise(usage):
        assert after["cache_read_input_tokens"] == (before["cache_read_input_tokens"]
                                                    + before["cache_creation_input_tokens"])
