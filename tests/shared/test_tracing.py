"""shared/tracing.py's helpers on a real SDK tracer provider (spans kept in memory, the
process's global provider untouched): off they yield None and import nothing; on they
nest, carry the GenAI attributes, mark failures with ``error.type`` only, and record
content only when asked. The schedule helper is what the schedules work calls."""
from __future__ import annotations

import subprocess
import sys
import types

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from shared import tracing
from shared.errors import JobFailure
from shared.usage_figures import CallUsage, JobFigures


@pytest.fixture
def spans(monkeypatch):
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setitem(tracing._state, "provider", provider)
    monkeypatch.setitem(tracing._state, "tracer", provider.get_tracer("test"))
    monkeypatch.setitem(tracing._state, "capture", False)
    return exporter


def usage(inp: int, out: int, read: int, write: int) -> CallUsage:
    return CallUsage(input_tokens=inp, output_tokens=out, cache_read_tokens=read,
                     cache_creation_tokens=write, cost_usd=None)


def run_one_turn(question: str = "How many flights?") -> None:
    figures = JobFigures()
    with tracing.schedule_run("sch_1", "7") as schedule, tracing.invoke_agent(
            model="claude-x", job_id="job_1", conversation_id="conv_1", tenant_id="7",
            question=question, figures=lambda: figures) as agent:
        with tracing.chat("claude-x") as chat:
            reply = types.SimpleNamespace(model="claude-x", id="msg_1", stop_reason="tool_use")
            tracing.record_reply(chat, reply, usage(10, 5, 100, 20), "claude-x")
            figures.usage += usage(10, 5, 100, 20)
        with tracing.execute_tool("execute_sql", "toolu_1") as tool:
            tracing.record_tool(tool, types.SimpleNamespace(
                rows=3, cached=False, is_error=True, input_text="SELECT 'secret'",
                text="Error: no such column"))
        tracing.record_answer(agent, "There were 3.")
        tracing.record_outcome(schedule, "succeeded")


def test_off_yields_none_and_never_imports_the_sdk():
    code = ("import sys; from shared import tracing\n"
            "with tracing.chat('m') as s, tracing.enqueue('chat', 1) as h: assert s is h is None\n"
            "assert not tracing.enabled()\n"
            "assert not [m for m in sys.modules if m.startswith('opentelemetry.sdk')], 'sdk'\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr


def test_spans_nest_and_carry_genai_attributes_without_content(spans):
    run_one_turn()
    found = {s.name: s for s in spans.get_finished_spans()}
    assert set(found) == {"schedule_run", "invoke_agent sunrise", "chat claude-x",
                          "execute_tool execute_sql"}
    schedule, agent = found["schedule_run"], found["invoke_agent sunrise"]
    chat, tool = found["chat claude-x"], found["execute_tool execute_sql"]
    assert agent.parent.span_id == schedule.context.span_id
    assert chat.parent.span_id == tool.parent.span_id == agent.context.span_id
    assert chat.attributes["gen_ai.usage.input_tokens"] == 130  # cached tokens included
    assert chat.attributes["gen_ai.usage.cache_read.input_tokens"] == 100
    assert chat.attributes["gen_ai.usage.cache_creation.input_tokens"] == 20
    assert chat.attributes["gen_ai.response.finish_reasons"] == ("tool_use",)
    assert agent.attributes["gen_ai.usage.output_tokens"] == 5
    assert agent.attributes["gen_ai.conversation.id"] == "conv_1"
    assert tool.attributes["error.type"] == "tool_error"
    assert schedule.attributes["sunrise.outcome"] == "succeeded"
    text = repr([dict(s.attributes) for s in spans.get_finished_spans()])
    assert "How many flights" not in text and "secret" not in text and "There were" not in text


def test_content_only_when_asked(spans, monkeypatch):
    monkeypatch.setitem(tracing._state, "capture", True)
    run_one_turn()
    found = {s.name: s for s in spans.get_finished_spans()}
    assert "How many flights?" in found["invoke_agent sunrise"].attributes["gen_ai.input.messages"]
    assert "There were 3." in found["invoke_agent sunrise"].attributes["gen_ai.output.messages"]
    assert found["execute_tool execute_sql"].attributes["gen_ai.tool.call.arguments"] == (
        "SELECT 'secret'")


def test_a_failure_is_marked_by_its_code_without_its_message(spans):
    with pytest.raises(JobFailure), tracing.dataset_import("ds_1", 2):
        raise JobFailure("import_timed_out", "table 'payroll' of acme took too long")
    (span,) = spans.get_finished_spans()
    assert span.attributes["error.type"] == "import_timed_out"
    assert span.status.description == "import_timed_out"
    assert not span.events and "payroll" not in repr(dict(span.attributes))
