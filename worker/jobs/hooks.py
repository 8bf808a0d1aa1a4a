"""What a job's turn reports, persisted and published: the ``LoopHooks`` of a real job.

Every model call and tool call is stored (``llm_calls``, ``tool_calls``) and becomes an
event on the job's stream; thinking summaries and the answer as it is written are
events only (thinking is never stored). Metrics count calls when a registry is given.
Events go through the runner's sink (``worker/jobs/events.py``), which batches them.

A call whose reply asks for tools is stored at once, before the tools run (they may
take up to the SQL time limit, and a paid call must outlive a worker that dies in
them); a round's tool rows are held (``trace``) until its boundary, where one
transaction stores them and reads the cancel flag; the last round's call row goes with
the job's final write (the runner hands ``trace`` to ``JobStore.finish``). What a crash
can lose is said in ``worker.jobs.store.UnwrittenTrace``.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from shared.logging_setup import set_log_field
from shared.usage_figures import CALL_FIELDS, CallUsage, usage_view
from worker.jobs.events import JobSink
from worker.jobs.store import ClaimedJob, JobStore, UnwrittenTrace, call_row, tool_row
from worker.tools import ToolRun


class JobHooks:
    def __init__(self, job: ClaimedJob, store: JobStore, events: JobSink, metrics: Any):
        self.job = job
        self.store = store
        self.events = events
        self.metrics = metrics
        # The rows of the round in progress (and of the last one, until the final write).
        self.trace = UnwrittenTrace()

    def on_llm_call(self, round_no: int, usage: CallUsage, stop_reason: str | None,
                    ms: int) -> None:
        set_log_field("round", round_no)
        self.trace.calls.append(call_row(self.job, round_no, usage.as_dict(), stop_reason, ms))
        if stop_reason == "tool_use":
            self.store.record_calls(self.trace)
        self.events.publish(self.job.id, "llm_call", {
            "round": round_no, **usage_view(usage, CALL_FIELDS), "stop_reason": stop_reason,
            "ms": ms})
        if self.metrics is not None:
            self.metrics.llm_call(self.job.model, usage)

    def on_llm_retry(self, round_no: int, error_type: str) -> None:
        if self.metrics is not None:
            self.metrics.llm_retry(self.job.model, error_type)

    def on_thinking(self, round_no: int, text: str) -> None:
        # Summary text only, as the API returned it; thinking is never stored.
        self.events.publish(self.job.id, "thinking", {"round": round_no, "text": text})

    def on_tool_call(self, round_no: int, run: ToolRun) -> None:
        set_log_field("round", round_no)
        self.trace.tools.append(tool_row(self.job, round_no, run))
        self.events.publish(self.job.id, "tool_call", {
            "round": round_no, "tool": run.tool, "query_id": run.query_id,
            "sql": run.input_text, "rows": run.rows, "cached": run.cached,
            "ms": round(run.ms, 1), "error": run.error})

    def on_answer_delta(self, text: str) -> None:
        self.events.publish(self.job.id, "answer_delta", {"text": text})

    def on_stream_read(self, publish_answer: Callable[[], None]) -> None:
        self.events.flush_if_due(self.job.id, publish_answer)

    def cancel_requested(self) -> bool:
        """Asked at each round boundary: the round's rows are stored and the flag read in
        one transaction (raises the database error once the write's retries are spent);
        with no rows held the flag alone is read."""
        if self.trace:
            return self.store.record_round(self.job, self.trace)
        return self.store.cancel_requested(self.job.id)
