"""Runs one job end to end: claim, loop, persist, publish. Callable without Celery."""
from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable
from typing import Any

from shared.config import Settings
from shared.db import session_factory
from shared.errors import JobCancelled, JobFailure
from shared.events import EventSink
from shared.job_view import job_to_dict
from shared.logging_setup import log_context, set_log_field
from shared.models import Job
from shared.usage_figures import CALL_FIELDS, CallUsage, JobFigures, usage_view
from worker.agent_loop import AgentLoop
from worker.heartbeat import Heartbeats
from worker.history import load_history
from worker.job_store import ClaimedJob, JobEnding, JobStore
from worker.llm_client import MISSING_KEY_HELP, make_client
from worker.sql_sandbox import get_sandbox, sandbox_settings
from worker.system_prompt import build_system_prompt

logger = logging.getLogger(__name__)


class NullSink:
    def publish(self, object_id: str, event: str, data: dict[str, Any]) -> None:
        return None


class BestEffortSink:
    """Publishes through ``sink`` but never fails a job over it: events are progress
    reports, the database row is the truth (SSE and long-poll fall back to it)."""

    def __init__(self, sink: EventSink):
        self.sink = sink

    def publish(self, object_id: str, event: str, data: dict[str, Any]) -> Any:
        try:
            return self.sink.publish(object_id, event, data)
        except Exception as exc:
            logger.warning("job %s: %s event not published: %s", object_id, event, exc)
            return None


class JobRunner:
    """Everything a worker needs to run jobs; build one per process and reuse it."""

    def __init__(
        self,
        settings: Settings,
        *,
        events: EventSink | None = None,
        client=None,
        sandbox=None,
        today: Callable[[], dt.date] = dt.date.today,
        metrics=None,
        after_finish: list[Callable[[Job], None]] | None = None,
    ):
        self.settings = settings
        self.store = JobStore(session_factory(settings.database_url),
                              stale_after_s=settings.stale_after_s)
        self.heartbeats = Heartbeats(self.store.sessions, interval_s=settings.heartbeat_s)
        self.events = BestEffortSink(events) if events is not None else NullSink()
        self.client = client or make_client(settings)
        self.sandbox = sandbox or get_sandbox(settings.duckdb_path, **sandbox_settings(settings))
        self.today = today
        self.metrics = metrics
        # Called with the finished job row after its terminal event (e.g. batch progress).
        self.after_finish = list(after_finish or [])

    def system_prompt(self) -> str:
        return build_system_prompt(self.sandbox.describe_schema(), self.today())

    def run(self, job_id: str) -> str | None:
        """Run ``job_id`` if it can be claimed. Returns the final status, or None if not ours."""
        with log_context(job_id=job_id):
            return self._run(job_id)

    def _run(self, job_id: str) -> str | None:
        job = self.store.claim(job_id)
        if job is None:
            logger.info("job %s not claimable (finished, cancelled or running elsewhere)", job_id)
            return None
        if job.attempt > self.settings.max_attempts:
            return self._finish(job, JobEnding("failed", error_code="too_many_attempts",
                                               error_message="The job was interrupted too many "
                                               "times."),
                                JobFigures(), time.perf_counter())
        set_log_field("tenant", job.tenant_id)
        logger.info("job %s started (attempt %s)", job.id, job.attempt)
        self.events.publish(job.id, "started", {"attempt": job.attempt})
        started = time.perf_counter()
        self.heartbeats.add(job.id, job.attempt)
        loop = None
        try:
            if self.settings.llm_target == "missing":
                raise JobFailure("llm_auth", MISSING_KEY_HELP)
            with self.store.sessions() as s:
                history = load_history(
                    s, job.conversation_id, exclude_job_id=job.id,
                    max_turns=self.settings.history_turns,
                    token_budget=self.settings.history_token_budget,
                )
            loop = AgentLoop(client=self.client, sandbox=self.sandbox, settings=self.settings,
                             system_prompt=self.system_prompt(), hooks=_Hooks(self, job),
                             model=job.model)
            outcome = loop.run(history, job.message)
            ending = JobEnding.answered(outcome)
        except Exception as exc:
            ending = self.stopped(job, exc)
        finally:
            self.heartbeats.remove(job.id)
        return self._finish(job, ending, loop.stats if loop else JobFigures(), started)

    @staticmethod
    def stopped(job: ClaimedJob, exc: BaseException) -> JobEnding:
        """The ending of a run that ``exc`` stopped, logged as its kind deserves."""
        if isinstance(exc, JobFailure):
            logger.warning("job %s failed: %s %s", job.id, exc.code, exc.detail)
        elif not isinstance(exc, JobCancelled):
            logger.error("job %s crashed", job.id, exc_info=exc)
        return JobEnding.stopped(exc)

    def hooks_for(self, job: ClaimedJob) -> _Hooks:
        """The loop hooks run() uses, for drivers that make the LLM calls themselves."""
        return _Hooks(self, job)

    def complete(self, job: ClaimedJob, ending: JobEnding, stats: JobFigures, started: float) -> str | None:
        """Persist and announce an outcome computed elsewhere (economy mode) as run() does."""
        return self._finish(job, ending, stats, started)

    def _finish(self, job: ClaimedJob, ending: JobEnding, stats: JobFigures, started: float) -> str | None:
        ending.usage = stats.row(wall_ms=int((time.perf_counter() - started) * 1000))
        row = self.store.finish(job, ending)
        if row is None:
            return None
        logger.info("job %s %s", job.id, row.status)
        self.events.publish(job.id, row.status, job_to_dict(row))
        if self.metrics is not None:
            self.metrics.job_finished(row, stats)
        for callback in self.after_finish:
            try:
                callback(row)
            except Exception:
                logger.exception("job %s: after-finish callback %r failed", job.id, callback)
        return row.status


class _Hooks:
    """Persists and publishes what the loop reports."""

    def __init__(self, runner: JobRunner, job: ClaimedJob):
        self.runner = runner
        self.job = job

    def on_llm_call(self, round_no: int, usage: CallUsage, stop_reason, ms: int) -> None:
        set_log_field("round", round_no)
        self.runner.store.record_llm_call(self.job, round_no, usage.as_dict(), stop_reason, ms)
        self.runner.events.publish(self.job.id, "llm_call", {
            "round": round_no, **usage_view(usage, CALL_FIELDS), "stop_reason": stop_reason,
            "ms": ms})
        if self.runner.metrics is not None:
            self.runner.metrics.llm_call(self.job.model, usage)

    def on_llm_retry(self, round_no: int, error_type: str) -> None:
        if self.runner.metrics is not None:
            self.runner.metrics.llm_retry(self.job.model, error_type)

    def on_thinking(self, round_no: int, text: str) -> None:
        # Summary text only, as the API returned it; thinking is never stored.
        self.runner.events.publish(self.job.id, "thinking", {"round": round_no, "text": text})

    def on_tool_call(self, round_no: int, result, cached: bool) -> None:
        set_log_field("round", round_no)
        self.runner.store.record_tool_call(self.job, round_no, result, cached)
        self.runner.events.publish(self.job.id, "tool_call", {
            "round": round_no, "query_id": None if result.is_error else result.query_id,
            "sql": result.sql, "rows": result.total_rows, "cached": cached,
            "ms": round(result.ms, 1), "error": result.error})

    def on_answer_delta(self, text: str) -> None:
        self.runner.events.publish(self.job.id, "answer_delta", {"text": text})

    def cancel_requested(self) -> bool:
        return self.runner.store.cancel_requested(self.job.id)
