"""Prometheus metrics that a worker process moves as its jobs run (names prefixed ``sunrise_``).

A ``Metrics`` object owns its metric families in one registry. Workers build one per
process with :func:`get_metrics` (the default registry) and serve it on their own
port (``worker/observability.py``); the API's ``/metrics`` adds the fleet-wide
figures read at scrape time (``api/fleet_metrics.py``). No label carries a tenant:
cardinality stays bounded and one tenant's traffic never shows in a shared scrape --
except the cost figures of :func:`tenant_spend_families` (one series per tenant and
period, read from the database by the API's scrape), which budgets' alerts need.

Recording never raises: a metrics bug must not fail a job, so errors are logged.
"""
from __future__ import annotations

import datetime as dt
import logging
import threading

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily

from shared.job_state import TERMINAL
from shared.usage_figures import TOKEN_FIELDS, prompt_tokens

logger = logging.getLogger(__name__)

# Seconds: from sub-second cached answers to the 300 s job deadline and beyond.
LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 8, 13, 20, 30, 60, 120, 300, 600)
ROUND_BUCKETS = (0, 1, 2, 3, 4, 5, 6, 8, 10, 12)
PARSE_PATHS = ("direct", "fenced", "anchored", "raw", "truncated")
# Prometheus label value -> usage figure.
IMPORT_OUTCOMES = ("ready", "failed")
SCHEDULE_RUN_OUTCOMES = ("delivered", "partially_delivered", "failed", "skipped")
REAPER_ACTIONS = ("requeued", "failed", "imports_resent")
TOKEN_KINDS = dict(zip(("input", "output", "cache_read", "cache_write"), TOKEN_FIELDS,
                       strict=True))


class Metrics:
    """The worker-side metric families, registered in ``registry``.

    Raises ``ValueError`` (from prometheus-client) if ``registry`` already holds them:
    build one per registry (tests pass a fresh ``CollectorRegistry``).
    """

    def __init__(self, registry: CollectorRegistry = REGISTRY):
        self.registry = registry
        r = {"registry": registry}
        self.jobs_finished = Counter(
            "sunrise_jobs_finished", "Jobs a worker brought to a terminal status.", ["status"], **r)
        self.job_errors = Counter(
            "sunrise_job_errors", "Failed or cancelled jobs by error code.", ["code"], **r)
        self.queue_wait = _seconds("sunrise_job_queue_wait_seconds",
                                   "From submission to a worker first starting the job.", r)
        self.llm_time = _seconds("sunrise_job_llm_seconds",
                                 "Time one job spent in LLM calls, summed over its calls.", r)
        self.sql_time = _seconds("sunrise_job_sql_seconds",
                                 "Time one job spent running SQL, summed over its queries.", r)
        self.run_time = _seconds("sunrise_job_run_seconds",
                                 "Time a worker spent running the job (its wall_ms).", r)
        self.total_time = _seconds("sunrise_job_total_seconds",
                                   "From submission to the terminal status.", r)
        self.tool_rounds = Histogram(
            "sunrise_job_tool_rounds", "SQL tool rounds per finished job.",
            buckets=ROUND_BUCKETS, **r)
        self.parse_paths = Counter(
            "sunrise_answer_parse_path", "How the final answer JSON was recovered.", ["path"], **r)
        self.numbers_checked = Counter(
            "sunrise_answer_numbers_checked",
            "Figures in answer texts checked against the job's query results.", **r)
        self.numbers_unsupported = Counter(
            "sunrise_answer_numbers_unsupported",
            "Figures in answer texts not found in any query result the model saw.", **r)
        self.answers_flagged = Counter(
            "sunrise_answers_with_unsupported_numbers",
            "Answers holding at least one figure no query result supports.", **r)
        self.sql_queries = Counter(
            "sunrise_sql_queries", "SQL statements executed against DuckDB.", **r)
        self.sql_cache_hits = Counter(
            "sunrise_sql_cache_hits", "Repeated SQL answered from the per-job cache.", **r)
        self.llm_calls = Counter("sunrise_llm_calls", "Messages API calls.", ["model"], **r)
        self.llm_tokens = Counter(
            "sunrise_llm_tokens",
            "Tokens by kind: input (uncached), output, cache_read, cache_write.",
            ["model", "kind"], **r)
        self.llm_cost = Counter("sunrise_llm_cost_usd", "LLM cost in US dollars.", ["model"], **r)
        self.llm_unpriced = Counter(
            "sunrise_llm_unpriced_calls", "LLM calls to a model without a known price.",
            ["model"], **r)
        self.llm_retries = Counter(
            "sunrise_llm_stream_retries",
            "Streams retried after an error event mid-stream (the SDK retries the rest).",
            ["model", "error_type"], **r)
        self.cache_hit_ratio = Gauge(
            "sunrise_prompt_cache_hit_ratio",
            "Share of prompt tokens read from the prompt cache since this process started: "
            "cache_read / (input + cache_read + cache_write).", **r)
        self.dataset_imports = Counter(
            "sunrise_dataset_imports", "Dataset imports a worker finished, by outcome.",
            ["outcome"], **r)
        self.reaper_actions = Counter(
            "sunrise_reaper_actions",
            "What reaper sweeps did: jobs re-enqueued (requeued), stale jobs failed for "
            "good (failed), lost imports sent again (imports_resent).", ["action"], **r)
        self.schedule_runs = Counter(
            "sunrise_schedule_runs", "Scheduled runs finished, by outcome.", ["outcome"], **r)
        self.schedule_deliveries = Counter(
            "sunrise_schedule_deliveries",
            "Deliveries of scheduled runs' results, by type (email, webhook, ...) and outcome.",
            ["type", "outcome"], **r)
        for status in TERMINAL:  # present from the start, so rate() works at once
            self.jobs_finished.labels(status)
        for path in PARSE_PATHS:
            self.parse_paths.labels(path)
        for outcome in IMPORT_OUTCOMES:
            self.dataset_imports.labels(outcome)
        for action in REAPER_ACTIONS:
            self.reaper_actions.labels(action)
        for outcome in SCHEDULE_RUN_OUTCOMES:
            self.schedule_runs.labels(outcome)
        self._lock = threading.Lock()
        self._prompt_tokens = 0
        self._cached_tokens = 0

    def job_finished(self, job, stats) -> None:
        """Count a finished job row and observe its latencies, rounds and SQL figures.

        ``job`` is the ``shared.models.Job`` row as written; ``stats`` its
        ``shared.usage_figures.JobFigures``. Never raises.
        """
        try:
            self.jobs_finished.labels(job.status).inc()
            if job.error_code:
                self.job_errors.labels(job.error_code).inc()
            if job.parse_path:
                self.parse_paths.labels(job.parse_path).inc()
            if job.numbers:
                unsupported = len(job.numbers.get("unsupported") or [])
                self.numbers_checked.inc(job.numbers.get("checked") or 0)
                self.numbers_unsupported.inc(unsupported)
                if unsupported:
                    self.answers_flagged.inc()
            _observe_between(self.queue_wait, job.created_at, job.started_at)
            _observe_between(self.total_time, job.created_at, job.finished_at)
            self.run_time.observe((job.wall_ms or 0) / 1000)
            self.llm_time.observe(stats.llm_ms / 1000)
            self.sql_time.observe(stats.sql_ms / 1000)
            self.tool_rounds.observe(stats.tool_rounds)
            self.sql_queries.inc(stats.sql_executed)
            self.sql_cache_hits.inc(stats.sql_cache_hits)
        except Exception:
            logger.exception("could not record metrics of job %s", getattr(job, "id", "?"))

    def llm_call(self, model: str, usage) -> None:
        """Count one LLM call: its tokens by kind, its cost, the cache hit ratio. Never raises."""
        try:
            self.llm_calls.labels(model).inc()
            for kind, attr in TOKEN_KINDS.items():
                self.llm_tokens.labels(model, kind).inc(getattr(usage, attr))
            if usage.cost_usd is None:
                self.llm_unpriced.labels(model).inc()
            else:
                self.llm_cost.labels(model).inc(float(usage.cost_usd))
            with self._lock:
                self._prompt_tokens += prompt_tokens(usage)
                self._cached_tokens += usage.cache_read_tokens
                if self._prompt_tokens:
                    self.cache_hit_ratio.set(self._cached_tokens / self._prompt_tokens)
        except Exception:
            logger.exception("could not record metrics of an LLM call to %s", model)

    def llm_retry(self, model: str, error_type: str) -> None:
        """Count one mid-stream retry. Never raises."""
        try:
            self.llm_retries.labels(model, error_type).inc()
        except Exception:
            logger.exception("could not record a stream retry of %s", model)

    def dataset_import_finished(self, outcome: str | None) -> None:
        """Count one finished import (``outcome`` is the dataset's status afterwards;
        None -- not this worker's to build -- counts nothing). Never raises."""
        try:
            if outcome in IMPORT_OUTCOMES:
                self.dataset_imports.labels(outcome).inc()
        except Exception:
            logger.exception("could not record an import outcome")

    def reaper_swept(self, counts: dict[str, int]) -> None:
        """Count what one reaper sweep did (``Reaper.run_once()``'s counts). Never raises."""
        try:
            self.reaper_actions.labels("requeued").inc(counts.get("requeued", 0))
            self.reaper_actions.labels("failed").inc(counts.get("failed", 0))
            self.reaper_actions.labels("imports_resent").inc(counts.get("imports", 0))
        except Exception:
            logger.exception("could not record a reaper sweep")

    def schedule_run_finished(self, outcome: str) -> None:
        """Count one scheduled run by its final status (delivered, partially_delivered,
        failed, skipped). Never raises."""
        try:
            self.schedule_runs.labels(outcome).inc()
        except Exception:
            logger.exception("could not record a schedule run")

    def schedule_delivery(self, type: str, outcome: str) -> None:
        """Count one delivery of a scheduled run's result: ``type`` the channel
        (email, webhook, slack), ``outcome`` delivered or failed. Never raises."""
        try:
            self.schedule_deliveries.labels(type, outcome).inc()
        except Exception:
            logger.exception("could not record a schedule delivery")


_process_metrics: Metrics | None = None
_process_metrics_lock = threading.Lock()


def get_metrics() -> Metrics:
    """The process-wide ``Metrics`` in prometheus-client's default registry.

    Thread-safe: a worker's first jobs arrive on several threads at once, and building
    the families twice would raise ``ValueError`` (duplicated timeseries).
    """
    global _process_metrics
    if _process_metrics is None:
        with _process_metrics_lock:
            if _process_metrics is None:
                _process_metrics = Metrics(REGISTRY)
    return _process_metrics


def _seconds(name: str, doc: str, registry_kw: dict) -> Histogram:
    return Histogram(name, doc, buckets=LATENCY_BUCKETS, **registry_kw)


def _observe_between(histogram: Histogram, start: dt.datetime | None,
                     end: dt.datetime | None) -> None:
    if start is not None and end is not None:
        histogram.observe(max(0.0, (end - start).total_seconds()))


def tenant_spend_families(tenants: list[dict]) -> list[GaugeMetricFamily]:
    """``sunrise_tenant_spend_usd{tenant, period}`` and ``sunrise_tenant_budget_usd{tenant,
    period}`` (periods ``day`` and ``month``, UTC) from ``shared.budgets.spend_by_tenant``
    rows; a period without a limit has no budget series."""
    spend = GaugeMetricFamily("sunrise_tenant_spend_usd",
                              "Cost of the tenant's model calls this UTC day or month.",
                              labels=["tenant", "period"])
    budget = GaugeMetricFamily("sunrise_tenant_budget_usd",
                               "The tenant's cost budget for the UTC day or month.",
                               labels=["tenant", "period"])
    for row in tenants:
        for period in ("day", "month"):
            spend.add_metric([row["tenant"], period], row["spend"][period])
            if row["limit"][period] is not None:
                budget.add_metric([row["tenant"], period], row["limit"][period])
    return [spend, budget]
