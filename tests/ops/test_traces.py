"""OpenTelemetry traces end to end: the real API (gunicorn) and a real worker process,
both exporting over OTLP/HTTP to a receiver in the test that decodes the protobuf. One
job is one trace: POST /v1/jobs -> send chat -> the Celery task -> invoke_agent -> a
chat span per model call and an execute_tool span per SQL call, with the GenAI
attributes and the exact token figures the job's usage rows hold; no question, answer
or SQL text in any attribute (content capture is off)."""
from __future__ import annotations

import json
import uuid

import pytest

from shared.usage_figures import prompt_tokens
from tests.utils.jobs import llm_calls, marker
from tests.utils.live_api import LiveApi
from tests.utils.otlp_receiver import OtlpReceiver

SQL = "SELECT carrier, count(*) AS flights FROM flights GROUP BY 1 ORDER BY 2 DESC"
SERVER, CLIENT, PRODUCER, CONSUMER = 2, 3, 4, 5  # OTLP's SpanKind numbers
# Spans arrive within a batch processor's delay; the test's is short.
FAST_EXPORT = {"OTEL_BSP_SCHEDULE_DELAY": "100"}


@pytest.fixture
def receiver():
    with OtlpReceiver() as receiver:
        yield receiver


@pytest.fixture
def traced(ops_settings, start_worker, receiver, monkeypatch):
    """The API and one worker, both tracing to ``receiver``."""
    for name, value in FAST_EXPORT.items():
        monkeypatch.setenv(name, value)
    start_worker(concurrency=2, OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint)
    with LiveApi(ops_settings, otel_exporter_otlp_endpoint=receiver.endpoint) as api:
        yield api


def one_job(api, ops_auth, fake_llm) -> tuple[dict, str]:
    headers, _tenant = ops_auth
    tag = marker()
    scenario = fake_llm.scenario(f"traces-{uuid.uuid4().hex[:6]}", [
        {"tool_calls": [{"sql": SQL}]},
        {"text": json.dumps({"answerText": "UA flew most.", "charts": []})},
    ])
    question = f"{scenario} Which carrier flew most? {tag}"
    with api.client(headers["Authorization"].removeprefix("Bearer ")) as client:
        job = client.wait(client.submit(question)["job_id"], timeout=120)
    assert job["status"] == "succeeded", job
    return job, question


def test_one_job_is_one_trace_from_the_request_to_the_sql(traced, receiver, ops_auth,
                                                          ops_settings, fake_llm):
    job, question = one_job(traced, ops_auth, fake_llm)
    job_id = job["job_id"]

    def agent_of_job(spans):
        return [s for s in spans if s.name == "invoke_agent sunrise"
                and s.attributes.get("sunrise.job.id") == job_id]

    def complete(spans):
        agents = agent_of_job(spans)
        if not agents:
            return False
        names = [s.name for s in spans if s.trace_id == agents[0].trace_id]
        return "POST /v1/jobs" in names and "run/sunrise.run_job" in names \
            and names.count("execute_tool execute_sql") == 1 \
            and sum(n.startswith("chat ") for n in names) == 2

    spans = receiver.wait_for(complete, timeout=30)
    (agent,) = agent_of_job(spans)
    trace = [s for s in spans if s.trace_id == agent.trace_id]
    by_id = {s.span_id: s for s in trace}

    def parent(span):
        return by_id[span.parent_id]

    (request,) = [s for s in trace if s.name == "POST /v1/jobs"]
    (send,) = [s for s in trace if s.name == "send chat"]
    (task,) = [s for s in trace if s.name.startswith("run/")]
    chats = [s for s in trace if s.name.startswith("chat ")]
    (tool,) = [s for s in trace if s.name == "execute_tool execute_sql"]

    # API -> enqueue -> task -> agent -> model calls and SQL, across two processes.
    assert request.parent_id == "" and request.kind == SERVER and request.service == "sunrise-api"
    assert parent(send) is request and send.kind == PRODUCER
    assert send.attributes["messaging.destination.name"] == "chat"
    assert parent(task) is send and task.kind == CONSUMER and task.service == "sunrise-worker"
    assert task.name == "run/sunrise.run_job"
    assert parent(agent) is task
    assert all(parent(c) is agent and c.kind == CLIENT for c in chats)
    assert parent(tool) is agent

    # GenAI attributes, and the exact figures of the job's usage rows.
    calls = llm_calls(ops_settings, job_id)
    assert len(calls) == 2
    model = calls[0].model
    assert agent.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert agent.attributes["gen_ai.provider.name"] == "anthropic"
    assert agent.attributes["gen_ai.request.model"] == model
    assert agent.attributes["gen_ai.conversation.id"] == job["conversation_id"]
    # The first call asked for the SQL (tool_use), the second answered (end_turn).
    rounds = sorted(chats, key=lambda s: s.attributes["gen_ai.response.finish_reasons"]
                    != ["tool_use"])
    for span, call in zip(rounds, calls, strict=True):
        assert span.name == f"chat {model}"
        assert span.attributes["gen_ai.operation.name"] == "chat"
        assert span.attributes["gen_ai.request.model"] == model
        assert span.attributes["gen_ai.usage.input_tokens"] == prompt_tokens(call)
        assert span.attributes["gen_ai.usage.output_tokens"] == call.output_tokens
        assert span.attributes["gen_ai.usage.cache_read.input_tokens"] == call.cache_read_tokens
        assert (span.attributes["gen_ai.usage.cache_creation.input_tokens"]
                == call.cache_creation_tokens)
    assert [c.attributes["gen_ai.response.finish_reasons"] for c in rounds] == [
        ["tool_use"], ["end_turn"]]
    assert agent.attributes["gen_ai.usage.input_tokens"] == sum(prompt_tokens(c) for c in calls)
    assert agent.attributes["gen_ai.usage.output_tokens"] == sum(c.output_tokens for c in calls)
    assert tool.attributes["gen_ai.tool.name"] == "execute_sql"
    assert tool.attributes["sunrise.tool.rows"] > 0

    # Content capture is off: no question, answer or SQL anywhere in the trace.
    text = json.dumps([s.attributes for s in trace])
    for secret in (question, "Which carrier", "UA flew most", "GROUP BY", "Bearer"):
        assert secret not in text


def test_a_collector_that_is_down_costs_no_answer(ops_settings, start_worker, ops_auth,
                                                  fake_llm, monkeypatch):
    """Exporting is off the job's path: with the endpoint refusing connections, the
    API accepts and the worker answers as usual."""
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "100")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")
    with OtlpReceiver() as closed:
        endpoint = closed.endpoint  # bound, then closed below: nothing listens there
    start_worker(concurrency=2, OTEL_EXPORTER_OTLP_ENDPOINT=endpoint)
    with LiveApi(ops_settings, otel_exporter_otlp_endpoint=endpoint) as api:
        job, _question = one_job(api, ops_auth, fake_llm)
        assert job["result"]["answer_text"] == "UA flew most."
