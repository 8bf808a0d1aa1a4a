"""Runs one job end to end: claim, loop, persist, publish. Callable without Celery."""
from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Callable

from shared import tracing
from shared.config import Settings
from shared.db import session_factory
from shared.errors import JobCancelled, JobFailure
from shared.events import EventSink
from shared.job_view import job_to_dict
from shared.logging_setup import log_context, set_log_field
from shared.models import Job
from shared.usage_figures import JobFigures
from worker.agent.loop import AgentLoop
from worker.agent.verified_queries import VerifiedQueries
from worker.jobs.data_source import DataSource, TenantDatasets
from worker.jobs.events import job_sink
from worker.jobs.heartbeat import Heartbeats
from worker.jobs.history import load_history
from worker.jobs.hooks import JobHooks
from worker.jobs.store import ClaimedJob, JobEnding, JobStore, UnwrittenTrace
from worker.llm.client import CLIENT_POOLS, MISSING_KEY_HELP, make_client

logger = logging.getLogger(__name__)


class JobRunner:
    """Everything a worker needs to run jobs; build one per process and reuse it.

    ``data`` is where each job's data comes from (default: the dataset it pinned, else
    the built-in one).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        events: EventSink | None = None,
        client=None,
        data: DataSource | None = None,
        metrics=None,
        after_finish: list[Callable[[Job], None]] | None = None,
    ):
        self.settings = settings
        self.store = JobStore(session_factory(settings.database_url),
                              stale_after_s=settings.stale_after_s,
                              read_history=self._read_history)
        self.heartbeats = Heartbeats(self.store.sessions, interval_s=settings.heartbeat_s)
        self.events = job_sink(events, flush_every_s=settings.event_flush_ms / 1000)
        self.client = client or make_client(settings)
        # Jobs take the client given, else one of CLIENT_POOLS in turn (worker/llm/client.py).
        self._pooled_clients = client is None
        self._turns = itertools.count()
        self.data = data or TenantDatasets(settings)
        self.verified = VerifiedQueries(self.store.engine)
        self.metrics = metrics
        # Called with the finished job row after its terminal event (e.g. batch progress).
        self.after_finish = list(after_finish or [])

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
            return self.complete(job, JobEnding("failed", error_code="too_many_attempts",
                                                error_message="The job was interrupted too "
                                                "many times."),
                                 JobFigures(), time.perf_counter())
        set_log_field("tenant", job.tenant_id)
        logger.info("job %s started (attempt %s)", job.id, job.attempt)
        self.events.publish(job.id, "started", {"attempt": job.attempt})
        started = time.perf_counter()
        self.heartbeats.add(job.id, job.attempt)
        loop = data = None
        hooks = self.hooks_for(job)
        try:
            if self.settings.llm_target == "missing":
                raise JobFailure("llm_auth", MISSING_KEY_HELP)
            data = self.data.for_job(job)
            if data.cancel is not None:  # a live source: a cancel stops the query there
                self.heartbeats.watch(job.id, data.cancel)
            verified = self.verified.for_question(job.tenant_id, job.dataset_id, job.message)
            loop = AgentLoop(client=self.client_for_job(), sandbox=data.sandbox, settings=self.settings,
                             system_prompt=data.system_prompt, hooks=hooks, model=job.model,
                             verified=verified)
            ending = JobEnding.answered(self._turn(job, loop))
        except Exception as exc:
            ending = self.stopped(job, exc)
        finally:
            self.heartbeats.remove(job.id)
        ending.data_as_of = data.data_as_of() if data is not None else None
        if data is not None and data.policies:
            ending.policies = list(data.policies)  # the job's audit entry names them
        return self.complete(job, ending, loop.stats if loop else JobFigures(), started,
                             hooks.trace)

    def _turn(self, job: ClaimedJob, loop: AgentLoop):
        """The job's turn, in its ``invoke_agent`` span."""
        with tracing.invoke_agent(model=loop.turn.model, job_id=job.id,
                                  conversation_id=job.conversation_id, tenant_id=job.tenant_id,
                                  question=job.message, figures=lambda: loop.stats) as span:
            outcome = loop.run(self.history(job), job.message)
            tracing.record_answer(span, outcome.answer_text)
        return outcome

    def client_for_job(self):
        """The model client of the next job: the one given to the runner, else the next
        of this process's pooled clients (``worker/llm/client.py``)."""
        if not self._pooled_clients:
            return self.client
        return make_client(self.settings, pool=next(self._turns) % CLIENT_POOLS)

    def history(self, job: ClaimedJob) -> list[dict]:
        """The earlier turns of the job's conversation, as the model is to see them: read
        with the claim, else now."""
        if job.history is not None:
            return job.history
        with self.store.engine.connect() as conn:
            return self._read_history(conn, job.conversation_id, job.id)

    def _read_history(self, conn, conversation_id: str, job_id: str) -> list[dict]:
        return load_history(conn, conversation_id, exclude_job_id=job_id,
                            max_turns=self.settings.history_turns,
                            token_budget=self.settings.history_token_budget)

    def hooks_for(self, job: ClaimedJob) -> JobHooks:
        """The hooks that persist and publish what the job's turn reports."""
        return JobHooks(job, self.store, self.events, self.metrics)

    @staticmethod
    def stopped(job: ClaimedJob, exc: BaseException) -> JobEnding:
        """The ending of a run that ``exc`` stopped, logged as its kind deserves."""
        if isinstance(exc, JobFailure):
            logger.warning("job %s failed: %s %s", job.id, exc.code, exc.detail)
        elif not isinstance(exc, JobCancelled):
            logger.error("job %s crashed", job.id, exc_info=exc)
        return JobEnding.stopped(exc)

    def complete(self, job: ClaimedJob, ending: JobEnding, figures: JobFigures,
                 started: float, trace: UnwrittenTrace | None = None) -> str | None:
        """Write the job's ending (``figures`` as its usage, timed from ``started``) with
        the rows its hooks still hold (``trace``), then announce it; returns the final
        status, or None when the job was no longer ours."""
        ending.usage = figures.row(wall_ms=int((time.perf_counter() - started) * 1000))
        row = self.store.finish(job, ending, trace)
        if row is None:
            self.events.flush(job.id)  # what the run reported, without an ending of ours
            return None
        logger.info("job %s %s", job.id, row.status)
        if self.metrics is not None:
            self.metrics.job_finished(row, figures)
        announce_end(self.events, row, self.after_finish)
        return row.status


def announce_end(events: EventSink, row: Job, after_finish: list[Callable[[Job], None]]) -> None:
    """Publish a finished job's terminal event, then call each ``after_finish`` with the
    row; neither a failed publish nor a failing callback raises (both are logged)."""
    try:
        events.publish(row.id, row.status, job_to_dict(row))
    except Exception as exc:  # SSE readers and long-polls fall back to the database row
        logger.warning("job %s: could not publish its terminal event: %s", row.id, exc)
    for callback in after_finish:
        try:
            callback(row)
        except Exception:
            logger.exception("job %s: after-finish callback %r failed", row.id, callback)
