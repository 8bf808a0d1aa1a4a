"""Job state transitions in the app database, each one guarded so it happens once.

The claim and the final write are conditional UPDATEs on (status, attempt): a
redelivered or reaped job can never write a second answer or double its usage.
Writes made while a job runs outlive a short database outage (they are retried),
and the ones that count money (LLM calls) are idempotent per (job, attempt, round),
so a retried write whose first commit did land is not counted twice.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import logging

from sqlalchemy import func, or_, select, update
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.orm import Session, sessionmaker
from tenacity import retry, retry_if_exception_type, stop_after_delay, wait_exponential

from shared.models import Conversation, Job, LlmCall, Message, ToolCall, utcnow

logger = logging.getLogger(__name__)


def _log_retry(state) -> None:
    logger.warning("database write %s failed, retrying: %s",
                   getattr(state.fn, "__name__", "?"), state.outcome.exception())


# Writes outlive a short database outage rather than losing a finished answer.
_retry_db = retry(
    retry=retry_if_exception_type((OperationalError, DBAPIError)),
    wait=wait_exponential(multiplier=0.2, max=5),
    stop=stop_after_delay(120),
    reraise=True,
    before_sleep=_log_retry,
)
# Claiming gives up sooner: the message is acked anyway and the reaper re-enqueues the job.
_retry_claim = retry(
    retry=retry_if_exception_type((OperationalError, DBAPIError)),
    wait=wait_exponential(multiplier=0.2, max=2),
    stop=stop_after_delay(15),
    reraise=True,
    before_sleep=_log_retry,
)


@dataclasses.dataclass(frozen=True)
class ClaimedJob:
    id: str
    tenant_id: int
    conversation_id: str
    message: str
    model: str
    attempt: int


@dataclasses.dataclass
class Finish:
    status: str
    answer_text: str | None = None
    charts: list | None = None
    parse_path: str | None = None
    truncated: bool = False
    error_code: str | None = None
    error_message: str | None = None
    usage: dict = dataclasses.field(default_factory=dict)


class JobStore:
    def __init__(self, sessions: sessionmaker[Session], *, stale_after_s: float):
        self.sessions = sessions
        self.stale_after_s = stale_after_s

    @_retry_claim
    def claim(self, job_id: str) -> ClaimedJob | None:
        """Move a queued (or abandoned running) job to running; None if someone else has it.

        Each claim increments ``attempt``: every later write of this run is guarded by
        it. Raises the database error after ~15 s of failed retries.
        """
        now = utcnow()
        stale = now - dt.timedelta(seconds=self.stale_after_s)
        with self.sessions.begin() as s:
            claimed = s.execute(
                update(Job)
                .where(
                    Job.id == job_id,
                    or_(Job.status == "queued", (Job.status == "running") & (Job.heartbeat_at < stale)),
                )
                .values(status="running", attempt=Job.attempt + 1, heartbeat_at=now,
                        started_at=func.coalesce(Job.started_at, now))
            ).rowcount
            if not claimed:
                return None
            job = s.get(Job, job_id)
            return ClaimedJob(job.id, job.tenant_id, job.conversation_id, job.message, job.model,
                              job.attempt)

    def heartbeat(self, job: ClaimedJob) -> bool:
        """Refresh the heartbeat; False once the job is no longer ours."""
        with self.sessions.begin() as s:
            return bool(s.execute(
                update(Job).where(Job.id == job.id, Job.status == "running",
                                  Job.attempt == job.attempt).values(heartbeat_at=utcnow())
            ).rowcount)

    def cancel_requested(self, job_id: str) -> bool:
        """Whether a cancel was asked for; False (logged) when the database does not answer,
        since the flag is checked again at the next round boundary."""
        try:
            with self.sessions() as s:
                return bool(s.scalar(select(Job.cancel_requested).where(Job.id == job_id)))
        except (OperationalError, DBAPIError) as exc:
            logger.warning("job %s: cancel flag not readable, going on: %s", job_id, exc)
            return False

    @_retry_db
    def record_llm_call(self, job: ClaimedJob, round_no: int, usage: dict, stop_reason, ms: int):
        """Store one LLM call's usage, once per (job, attempt, round) however often retried."""
        with self.sessions.begin() as s:
            # A retry after a commit whose acknowledgement was lost must not bill twice.
            if s.scalar(select(LlmCall.id).where(LlmCall.job_id == job.id,
                                                 LlmCall.attempt == job.attempt,
                                                 LlmCall.round == round_no)):
                return
            s.add(LlmCall(job_id=job.id, tenant_id=job.tenant_id, attempt=job.attempt,
                          round=round_no, model=job.model, stop_reason=stop_reason, ms=ms, **usage))

    @_retry_db
    def record_tool_call(self, job: ClaimedJob, round_no: int, result, cached: bool):
        """Store one tool call of the trace (retried through a short database outage)."""
        with self.sessions.begin() as s:
            s.add(ToolCall(job_id=job.id, attempt=job.attempt, round=round_no,
                           query_id=None if result.is_error else result.query_id,
                           sql=result.sql, rows=result.total_rows, cached=cached,
                           is_error=result.is_error, error=result.error, ms=int(result.ms)))

    @_retry_db
    def finish(self, job: ClaimedJob, outcome: Finish) -> Job | None:
        """Write the terminal state, the answer message and usage in one transaction.

        Returns the updated job, or None when the job was no longer ours (already
        finished by another attempt, or reaped): nothing is written then. Database
        errors are retried for up to two minutes, then raised.
        """
        now = utcnow()
        with self.sessions.begin() as s:
            changed = s.execute(
                update(Job)
                .where(Job.id == job.id, Job.status == "running", Job.attempt == job.attempt)
                .values(
                    status=outcome.status, answer_text=outcome.answer_text, charts=outcome.charts,
                    parse_path=outcome.parse_path, truncated=outcome.truncated,
                    error_code=outcome.error_code, error_message=outcome.error_message,
                    finished_at=now, heartbeat_at=now, **outcome.usage,
                )
            ).rowcount
            if not changed:
                if self._already_written(s, job, outcome):
                    logger.warning("job %s attempt %s: an earlier try of this write committed",
                                   job.id, job.attempt)
                    return s.get(Job, job.id)
                logger.warning("job %s attempt %s lost ownership; result discarded", job.id, job.attempt)
                return None
            if outcome.status == "succeeded":
                s.add(Message(conversation_id=job.conversation_id, job_id=job.id, role="assistant",
                              text=outcome.answer_text or "", charts=outcome.charts))
            s.execute(update(Conversation).where(Conversation.id == job.conversation_id)
                      .values(updated_at=now))
            return s.get(Job, job.id)

    @staticmethod
    def _already_written(s: Session, job: ClaimedJob, outcome: Finish) -> bool:
        # A retried finish whose first commit landed but whose reply was lost finds the
        # row already holding this attempt's outcome; reporting it lets the terminal
        # event still be published. The reaper never writes messages or these codes.
        row = s.get(Job, job.id)
        if row is None or row.attempt != job.attempt or row.status != outcome.status:
            return False
        if outcome.status == "succeeded":
            return bool(s.scalar(select(Message.id).where(Message.job_id == job.id,
                                                         Message.role == "assistant")))
        return row.error_code == outcome.error_code

    def load(self, job_id: str) -> Job | None:
        with self.sessions() as s:
            return s.get(Job, job_id)
