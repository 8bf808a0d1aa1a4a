"""OpenTelemetry traces: off unless ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set (OTLP/HTTP).

One job is one trace: the API's request span (Flask's instrumentation), ``send <queue>``
around the enqueue (its context travels in the task message's headers), the Celery task
span (Celery's instrumentation, in the worker), one ``invoke_agent`` span for the job's
turn, a ``chat <model>`` span per model call and an ``execute_tool <tool>`` span per tool
call, after the OpenTelemetry GenAI semantic conventions. Dataset imports and schedule
runs have spans of their own (``dataset_import``, ``schedule_run``).

What spans record: ids (job, conversation, dataset, schedule, tenant), model names, token
figures, finish reasons, error codes, row counts. Questions, answers, SQL text and tool
results only with ``SUNRISE_OTEL_CAPTURE_CONTENT=true``; credentials, keys and request
headers never (Flask's instrumentation records method, route, status and the URL path).

While tracing is off, every helper here yields ``None`` without touching OpenTelemetry:
the SDK is not even imported. ``configure`` sets the process's tracer provider once; the
API calls ``init_app``, a worker ``configure`` when it starts (``worker/observability.py``).
"""
from __future__ import annotations

import contextlib
import json
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any

logger = logging.getLogger(__name__)

TRACER = "sunrise"
PROVIDER = "anthropic"
AGENT_NAME = "sunrise"
# What Flask's spans leave out: probes and scrapes would drown the requests.
UNTRACED_URLS = "healthz,readyz,metrics"
CONTENT_LIMIT = 4000  # characters of captured content per attribute

_lock = threading.Lock()
# "tracer" is the switch every span helper reads: None while tracing is off.
_state: dict[str, Any] = {"provider": None, "tracer": None, "capture": False}


def enabled() -> bool:
    return _state["tracer"] is not None


def configure(settings, service: str) -> bool:
    """Set up this process's tracer provider (exporting to the settings' OTLP endpoint)
    and the Celery instrumentation, once; True when tracing is on."""
    endpoint = settings.otel_exporter_otlp_endpoint
    if not endpoint:
        return False
    with _lock:
        if _state["provider"] is None:
            from opentelemetry import trace
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor

            provider = TracerProvider(resource=Resource.create({"service.name": service}))
            provider.add_span_processor(BatchSpanProcessor(
                OTLPSpanExporter(endpoint=f"{endpoint.rstrip('/')}/v1/traces")))
            trace.set_tracer_provider(provider)
            _state.update(provider=provider, tracer=provider.get_tracer(TRACER),
                          capture=settings.otel_capture_content)
            logger.info("traces of %s exported to %s", service, endpoint)
    return True


def instrument_celery_worker() -> None:
    """Celery's instrumentation: a span per task run, in the trace its message carries.
    (Its publish side is left to :func:`enqueue`: it loses the span of a task sent by
    name that the sending process does not define, as the API sends them.)"""
    from opentelemetry.instrumentation.celery import CeleryInstrumentor

    instrumentor = CeleryInstrumentor()
    if not instrumentor.is_instrumented_by_opentelemetry:
        instrumentor.instrument(tracer_provider=_state["provider"])


def init_app(app, settings) -> None:
    """Trace the API's requests when tracing is on (Flask's instrumentation)."""
    if configure(settings, "sunrise-api"):
        from opentelemetry.instrumentation.flask import FlaskInstrumentor

        FlaskInstrumentor.instrument_app(app, tracer_provider=_state["provider"],
                                         excluded_urls=UNTRACED_URLS)


def flush(timeout_ms: int = 5000) -> None:
    """Export what is buffered (a worker calls it as it shuts down)."""
    if _state["provider"] is not None:
        _state["provider"].force_flush(timeout_ms)


@contextlib.contextmanager
def _span(name: str, kind: str, attributes: dict[str, Any]) -> Iterator[Any]:
    """A span made current for the block, or None while tracing is off. An exception
    leaving the block marks it failed with ``error.type`` (its ``code`` if it has one);
    its message is not recorded (it may quote the data)."""
    tracer = _state["tracer"]
    if tracer is None:
        yield None
        return
    from opentelemetry.trace import SpanKind, StatusCode

    with tracer.start_as_current_span(name, kind=getattr(SpanKind, kind), attributes=attributes,
                                      record_exception=False,
                                      set_status_on_exception=False) as span:
        try:
            yield span
        except BaseException as exc:
            error = getattr(exc, "code", None) or type(exc).__name__
            span.set_attribute("error.type", str(error))
            span.set_status(StatusCode.ERROR, str(error))
            raise


@contextlib.contextmanager
def enqueue(queue: str, count: int) -> Iterator[dict[str, str] | None]:
    """``send <queue>`` around sending ``count`` task messages; yields the headers that
    carry its context to the tasks (None while tracing is off)."""
    with _span(f"send {queue}", "PRODUCER", {
            "messaging.system": "celery", "messaging.operation.type": "send",
            "messaging.destination.name": queue,
            "messaging.batch.message_count": count}) as span:
        if span is None:
            yield None
            return
        from opentelemetry.propagate import inject

        headers: dict[str, str] = {}
        inject(headers)
        yield headers


@contextlib.contextmanager
def invoke_agent(*, model: str, job_id: str, conversation_id: str | None, tenant_id: str,
                 question: str, figures: Callable[[], Any]) -> Iterator[Any]:
    """``invoke_agent`` around one job's turn; at its end, the job's summed token figures
    (``figures()``, a ``JobFigures``) whether it answered or not."""
    attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.provider.name": PROVIDER,
                  "gen_ai.agent.name": AGENT_NAME, "gen_ai.request.model": model,
                  "sunrise.job.id": job_id, "sunrise.tenant.id": tenant_id}
    if conversation_id:
        attributes["gen_ai.conversation.id"] = conversation_id
    with _span(f"invoke_agent {AGENT_NAME}", "INTERNAL", attributes) as span:
        if span is not None and _state["capture"]:
            span.set_attribute("gen_ai.input.messages", _messages("user", question))
        try:
            yield span
        finally:
            if span is not None:
                stats = figures()
                span.set_attributes(_usage(stats.usage))


def record_answer(span, answer_text: str) -> None:
    """The answer on the ``invoke_agent`` span, when content is captured."""
    if span is not None and _state["capture"]:
        span.set_attribute("gen_ai.output.messages", _messages("assistant", answer_text))


def chat(model: str) -> contextlib.AbstractContextManager[Any]:
    """``chat <model>`` around one model call."""
    return _span(f"chat {model}", "CLIENT", {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": PROVIDER,
        "gen_ai.request.model": model})


def record_reply(span, message: Any, usage: Any, model: str) -> None:
    """A model reply on its ``chat`` span: ``usage`` is its ``CallUsage`` (the exact
    figures the job's usage sums); ``gen_ai.response.model`` only where it differs from
    the requested ``model`` (each attribute costs the worker CPU to record and export)."""
    if span is None:
        return
    attributes = {"gen_ai.response.id": getattr(message, "id", "") or "",
                  "gen_ai.response.finish_reasons": [message.stop_reason or ""],
                  **_usage(usage)}
    if getattr(message, "model", model) != model:
        attributes["gen_ai.response.model"] = message.model
    span.set_attributes(attributes)


def execute_tool(name: str, call_id: str) -> contextlib.AbstractContextManager[Any]:
    """``execute_tool <name>`` around one tool call."""
    return _span(f"execute_tool {name}", "INTERNAL", {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
        "gen_ai.tool.call.id": call_id})


def record_tool(span, run: Any) -> None:
    """A tool call's outcome (a ``ToolRun``): rows, cache, error -- its SQL and result
    text only when content is captured."""
    if span is None:
        return
    attributes = {"sunrise.tool.rows": run.rows, "sunrise.tool.cached": run.cached}
    if run.is_error:
        attributes["error.type"] = "tool_error"
    if _state["capture"]:
        attributes["gen_ai.tool.call.arguments"] = run.input_text[:CONTENT_LIMIT]
        attributes["gen_ai.tool.call.result"] = run.text[:CONTENT_LIMIT]
    span.set_attributes(attributes)


@contextlib.contextmanager
def dataset_import(dataset_id: str, version: int) -> Iterator[Any]:
    """``dataset_import`` around building one version of a dataset; record its outcome
    with :func:`record_outcome`."""
    with _span("dataset_import", "INTERNAL", {"sunrise.dataset.id": dataset_id,
                                              "sunrise.dataset.version": version}) as span:
        yield span


@contextlib.contextmanager
def schedule_run(schedule_id: str, tenant_id: str) -> Iterator[Any]:
    """``schedule_run`` around one run of a schedule (the schedules work calls it); the
    jobs it enqueues inside join its trace. Record the outcome with :func:`record_outcome`."""
    with _span("schedule_run", "INTERNAL", {"sunrise.schedule.id": schedule_id,
                                            "sunrise.tenant.id": tenant_id}) as span:
        yield span


def record_outcome(span, outcome: str | None) -> None:
    if span is not None and outcome is not None:
        span.set_attribute("sunrise.outcome", outcome)


def _usage(usage: Any) -> dict[str, Any]:
    # GenAI conventions: input_tokens counts every prompt token, cached ones included.
    from shared.usage_figures import prompt_tokens

    found = {"gen_ai.usage.input_tokens": prompt_tokens(usage),
             "gen_ai.usage.output_tokens": usage.output_tokens,
             "gen_ai.usage.cache_read.input_tokens": usage.cache_read_tokens,
             "gen_ai.usage.cache_creation.input_tokens": usage.cache_creation_tokens}
    if usage.cost_usd is not None:
        found["sunrise.cost_usd"] = float(usage.cost_usd)
    return found


def _messages(role: str, text: str) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text",
                                                 "content": text[:CONTENT_LIMIT]}]}])
