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

from sqlalchemy import bindparam, func, insert, or_, select, update
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker

from shared.db_retry import retry_transient
from shared.models import Conversation, Job, LlmCall, Message, ToolCall, utcnow
from shared.text_limits import storable

logger = logging.getLogger(__name__)

# Writes outlive a short database outage or lock conflict rather than losing a finished
# answer; an error that would recur (a value the column refuses) is raised at once.
_retry_db = retry_transient(give_up_after_s=120, max_wait_s=5)
# Claiming gives up sooner: the message is acked anyway and the reaper re-enqueues the job.
_retry_claim = retry_transient(give_up_after_s=15, max_wait_s=2)


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
    numbers: dict | None = None

    @classmethod
    def answered(cls, outcome) -> Finish:
        """The successful finish of an agent loop's ``LoopOutcome``."""
        return cls("succeeded", answer_text=outcome.answer_text, charts=outcome.charts,
                   parse_path=outcome.parse_path, truncated=outcome.truncated,
                   numbers=outcome.numbers)


_jobs = Job.__table__
_llm_calls = LlmCall.__table__
_conversations = Conversation.__table__
_j = _jobs.c
_l = _llm_calls.c

# The hot path's statements, built once: each execution then skips building the
# statement and computing its compiled-cache key, and no ORM unit of work runs.
_now = bindparam("now", type_=_j.heartbeat_at.type)
_CLAIM = (
    update(_jobs)
    .where(_j.id == bindparam("job_id"),
           or_(_j.status == "queued",
               (_j.status == "running") & (_j.heartbeat_at < bindparam("stale"))))
    .values(status="running", attempt=_j.attempt + 1, heartbeat_at=_now,
            started_at=func.coalesce(_j.started_at, _now))
)
_CLAIMED = select(_j.id, _j.tenant_id, _j.conversation_id, _j.message, _j.model,
                  _j.attempt).where(_j.id == bindparam("job_id"))
_CANCEL_FLAG = select(_j.cancel_requested).where(_j.id == bindparam("job_id"))
_LLM_CALL_SEEN = select(_l.id).where(_l.job_id == bindparam("job_id"),
                                     _l.attempt == bindparam("attempt"),
                                     _l.round == bindparam("round")).limit(1)
# The SET clause comes from the parameters' keys (the terminal status, result, usage).
_FINISH = update(_jobs).where(_j.id == bindparam("b_job_id"), _j.status == "running",
                              _j.attempt == bindparam("b_attempt"))
_JOB_ROW = select(_jobs).where(_j.id == bindparam("job_id"))
_INSERT_LLM_CALL = insert(_llm_calls)
_INSERT_TOOL_CALL = insert(ToolCall.__table__)
_INSERT_MESSAGE = insert(Message.__table__)
_TOUCH_CONVERSATION = (update(_conversations)
                       .where(_conversations.c.id == bindparam("conversation_id"))
                       .values(updated_at=_now))


class JobStore:
    """The hot-path writes are Core statements on a pooled connection, not ORM units of
    work: the same SQL, at a fraction of the CPU (a job makes ~7 of these)."""

    def __init__(self, sessions: sessionmaker[Session], *, stale_after_s: float):
        self.sessions = sessions
        self.engine = sessions.kw["bind"]
        self.stale_after_s = stale_after_s

    @_retry_claim
    def claim(self, job_id: str) -> ClaimedJob | None:
        """Move a queued (or abandoned running) job to running; None if someone else has it.

        Each claim increments ``attempt``: every later write of this run is guarded by
        it. Raises the database error after ~15 s of failed retries.
        """
        now = utcnow()
        stale = now - dt.timedelta(seconds=self.stale_after_s)
        with self.engine.begin() as conn:
            if not conn.execute(_CLAIM, {"job_id": job_id, "stale": stale, "now": now}).rowcount:
                return None
            return ClaimedJob(*conn.execute(_CLAIMED, {"job_id": job_id}).one())

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
            with self.engine.connect() as conn:
                return bool(conn.scalar(_CANCEL_FLAG, {"job_id": job_id}))
        except DBAPIError as exc:
            logger.warning("job %s: cancel flag not readable, going on: %s", job_id, exc)
            return False

    @_retry_db
    def record_llm_call(self, job: ClaimedJob, round_no: int, usage: dict, stop_reason, ms: int):
        """Store one LLM call's usage, once per (job, attempt, round) however often retried."""
        with self.engine.begin() as conn:
            # A retry after a commit whose acknowledgement was lost must not bill twice.
            if conn.scalar(_LLM_CALL_SEEN, {"job_id": job.id, "attempt": job.attempt,
                                            "round": round_no}):
                return
            conn.execute(_INSERT_LLM_CALL, {
                "job_id": job.id, "tenant_id": job.tenant_id, "attempt": job.attempt,
                "round": round_no, "model": job.model, "stop_reason": stop_reason, "ms": ms,
                **usage})

    @_retry_db
    def record_tool_call(self, job: ClaimedJob, round_no: int, result, cached: bool):
        """Store one tool call of the trace (retried through a short database outage).

        The SQL and the error are the model's and DuckDB's text: cut to their columns."""
        with self.engine.begin() as conn:
            conn.execute(_INSERT_TOOL_CALL, {
                "job_id": job.id, "attempt": job.attempt, "round": round_no,
                "query_id": None if result.is_error else result.query_id,
                "sql": storable(result.sql), "rows": result.total_rows, "cached": cached,
                "is_error": result.is_error, "error": storable(result.error),
                "ms": int(result.ms)})

    @_retry_db
    def finish(self, job: ClaimedJob, outcome: Finish) -> Job | None:
        """Write the terminal state, the answer message and usage in one transaction.

        Returns the updated job, or None when the job was no longer ours (already
        finished by another attempt, or reaped): nothing is written then. Lost
        connections and lock conflicts are retried for up to two minutes, then raised;
        other database errors at once. The answer and error texts are made storable.
        """
        now = utcnow()
        answer_text = storable(outcome.answer_text, None)
        with self.sessions.begin() as s:
            conn = s.connection()
            changed = conn.execute(_FINISH, {
                "b_job_id": job.id, "b_attempt": job.attempt,
                "status": outcome.status, "answer_text": answer_text,
                "charts": outcome.charts, "parse_path": outcome.parse_path,
                "truncated": outcome.truncated, "numbers": outcome.numbers,
                "error_code": outcome.error_code,
                "error_message": storable(outcome.error_message), "finished_at": now,
                "heartbeat_at": now, **outcome.usage,
            }).rowcount
            if not changed:
                if self._already_written(s, job, outcome):
                    logger.warning("job %s attempt %s: an earlier try of this write committed",
                                   job.id, job.attempt)
                    return s.get(Job, job.id)
                logger.warning("job %s attempt %s lost ownership; result discarded", job.id, job.attempt)
                return None
            if outcome.status == "succeeded":
                conn.execute(_INSERT_MESSAGE, {
                    "conversation_id": job.conversation_id, "job_id": job.id,
                    "role": "assistant", "text": answer_text or "",
                    "charts": outcome.charts})
            conn.execute(_TOUCH_CONVERSATION, {"conversation_id": job.conversation_id,
                                               "now": now})
            # The row as committed, as a detached Job (what an expired-free s.get gave,
            # without an ORM load).
            return Job(**conn.execute(_JOB_ROW, {"job_id": job.id}).one()._mapping)

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
