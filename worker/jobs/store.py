"""What a running job writes to the app database: its claim, its trace, its ending.

The claim and the final write are the guarded transitions of ``shared/job_state.py``
on (status, attempt): a redelivered or reaped job can never write a second answer or
double its usage. Writes made while a job runs outlive a short database outage (they
are retried), and the ones that count money (LLM calls) are idempotent per (job,
attempt, round), so a retried write whose first commit did land is not counted twice.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import logging
from collections.abc import Callable

from sqlalchemy import bindparam, exists, insert, select
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker

from shared import job_state
from shared.audit import record_job
from shared.db_retry import retry_transient
from shared.driver_sql import DriverConnection, DriverSQL
from shared.errors import JobCancelled, JobFailure
from shared.models import Conversation, Job, LlmCall, Message, ToolCall, utcnow
from shared.text_limits import storable
from shared.usage_figures import JOB_FIELDS

logger = logging.getLogger(__name__)

# Writes outlive a short database outage or lock conflict rather than losing a finished
# answer; an error that would recur (a value the column refuses) is raised at once.
_retry_db = retry_transient(give_up_after_s=120, max_wait_s=5)
# Claiming gives up sooner: the message is acked anyway and the reaper re-enqueues the job.
_retry_claim = retry_transient(give_up_after_s=15, max_wait_s=2)
# Every write below is retried on a lost connection (the cancel check reads again at the
# next boundary), so a connection back in the pool for less than this is used without a
# ping (shared.db.checkout): at 4 checkouts per job, a ping each was ~0.3 ms of CPU.
UNPINGED_WITHIN_S = 1.0


@dataclasses.dataclass(frozen=True)
class ClaimedJob:
    id: str
    tenant_id: int
    conversation_id: str
    message: str
    model: str
    attempt: int
    dataset_id: str | None = None
    dataset_version: int | None = None
    # Read with the claim for the finished row the terminal event and hooks are given
    # (``JobStore.finish``): nothing of the job is read back after its final write.
    batch_id: str | None = None
    batch_index: int | None = None
    created_at: dt.datetime | None = None
    started_at: dt.datetime | None = None
    # The user the job runs for (shared.principal.principal_for_job); None: its tenant.
    user_id: int | None = None
    # The conversation's earlier turns, as the model is to see them, when the store
    # reads them with the claim (``JobStore(read_history=...)``); not a column.
    history: list[dict] | None = dataclasses.field(default=None, compare=False)


@dataclasses.dataclass
class JobEnding:
    """What the final write of a run stores: the terminal status with the answer or the
    error, and the usage figures (``shared.usage_figures.JOB_FIELDS``)."""

    status: str
    answer_text: str | None = None
    charts: list | None = None
    parse_path: str | None = None
    truncated: bool = False
    error_code: str | None = None
    error_message: str | None = None
    usage: dict = dataclasses.field(default_factory=dict)
    numbers: dict | None = None
    # When the data the job read is from (``JobData.data_as_of``); None: it read none.
    data_as_of: dt.datetime | None = None
    # The row policies and masks applied to its queries, for the audit log (the policy
    # engine fills it); None: none applied.
    policies: list | None = None

    @classmethod
    def answered(cls, outcome) -> JobEnding:
        """The successful ending of an agent loop's ``LoopOutcome``."""
        return cls("succeeded", answer_text=outcome.answer_text, charts=outcome.charts,
                   parse_path=outcome.parse_path, truncated=outcome.truncated,
                   numbers=outcome.numbers)

    @classmethod
    def stopped(cls, exc: BaseException) -> JobEnding:
        """The ending of a run stopped by ``exc``: cancelled for ``JobCancelled``, failed
        with its code for ``JobFailure``, failed ``internal_error`` for anything else."""
        if isinstance(exc, JobCancelled):
            return cls("cancelled", error_code="cancelled",
                       error_message=job_state.CANCELLED_MESSAGE)
        if isinstance(exc, JobFailure):
            return cls("failed", error_code=exc.code, error_message=exc.detail)
        return cls("failed", error_code="internal_error",
                   error_message="Sunrise hit an internal error while answering.")


# The hot path's statements, built once: each execution then skips building the
# statement and computing its compiled-cache key, and no ORM unit of work runs.
jobs, llm_calls, conversations = Job.__table__, LlmCall.__table__, Conversation.__table__
_CLAIM_FIELDS = tuple(field.name for field in dataclasses.fields(ClaimedJob)
                      if field.name != "history")
_CLAIMED = select(*(jobs.c[name] for name in _CLAIM_FIELDS)
                  ).where(jobs.c.id == bindparam("job_id"))
_JOB_ROW = select(jobs).where(jobs.c.id == bindparam("job_id"))
# An LLM call's row unless this (job, attempt, round) has one already, in one statement:
# a retry after a commit whose acknowledgement was lost must not bill twice.
_LLM_CALL_COLUMNS = [c for c in llm_calls.c if c.name != "id"]
_INSERT_LLM_CALL_ONCE = insert(llm_calls).from_select(
    [c.name for c in _LLM_CALL_COLUMNS],
    select(*(bindparam(c.name, type_=c.type) for c in _LLM_CALL_COLUMNS)).where(~exists().where(
        llm_calls.c.job_id == bindparam("job_id"), llm_calls.c.attempt == bindparam("attempt"),
        llm_calls.c.round == bindparam("round"))),
    include_defaults=False)
_LLM_CALL_DEFAULTS = {c.name: c.default.arg for c in _LLM_CALL_COLUMNS
                      if c.default is not None and c.default.is_scalar}
_INSERT_TOOL_CALL = insert(ToolCall.__table__)
_ANSWER_STORED = select(Message.__table__.c.id).where(
    Message.__table__.c.job_id == bindparam("job_id"),
    Message.__table__.c.role == "assistant").limit(1)
# A finish moves the job's conversation to the top (api/services/conversations.py):
# in the FINISH statement where the database can (job_state.FINISH_TOUCHING), else
# with job_state.TOUCH_CONVERSATION after it.


# The usage columns as created: what a finish without usage figures leaves in the row
# (only the final write sets them).
_UNSET_USAGE = {name: jobs.c[name].default.arg for name in JOB_FIELDS}


def finished_row(job: ClaimedJob, ending: dict) -> Job:
    """The job row as a final write of ``ending`` (the FINISH values) left it, as a
    detached ``Job``, built from what the run knows instead of read back after the commit.

    Every column ``shared.job_view.job_to_dict`` and the after-finish hooks read is set
    (the claim's, read with it; the ending's, written as given: the timestamps are
    whole microseconds, as DATETIME(6) keeps them). The columns nothing after a finish
    reads -- queue, idempotency_key, request_hash, enqueued_at, cancel_requested -- are
    left unset (None).
    """
    values = {name: getattr(job, name) for name in _CLAIM_FIELDS}
    values.update(_UNSET_USAGE)
    values.update(ending)
    return Job(**values)


@dataclasses.dataclass
class UnwrittenTrace:
    """A running job's trace rows not stored yet: LLM call rows and tool call rows, as
    the statements' parameters (``call_row``, ``tool_row``).

    A call that asked for tools is stored before they run (``JobStore.record_calls``);
    a round's tool rows wait for its boundary, where ``JobStore.record_round`` stores
    them in the transaction that reads the cancel flag; the last round's call goes with
    the final write (``JobStore.finish``), which follows it with no tool or query in
    between. So a worker that dies loses at most the tool rows of the round it was in,
    never a paid call's row (unless it dies in the instant between a final reply and
    the final write): the reaper requeues the job (its heartbeat goes stale) and the
    next attempt asks the model again and stores its own rows. The job's usage equals
    the sum of the LLM call rows of the attempt that finished it, ``llm_calls`` keeps
    every attempt's calls, and no row is stored twice (one per (job, attempt, round),
    however often retried).
    """

    calls: list[dict] = dataclasses.field(default_factory=list)
    tools: list[dict] = dataclasses.field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.calls or self.tools)

    def clear(self) -> None:
        self.calls.clear()
        self.tools.clear()


def call_row(job: ClaimedJob, round_no: int, usage: dict, stop_reason: str | None,
             ms: int) -> dict:
    """The ``llm_calls`` row of one LLM call (``usage``: its ``CALL_FIELDS``), stamped now."""
    return {**_LLM_CALL_DEFAULTS, "job_id": job.id, "tenant_id": job.tenant_id,
            "attempt": job.attempt, "round": round_no, "model": job.model,
            "stop_reason": stop_reason, "ms": ms, "created_at": utcnow(), **usage}


def tool_row(job: ClaimedJob, round_no: int, run) -> dict:
    """The ``tool_calls`` row of one tool call (a ``worker.tools.ToolRun``). Its input and
    error are the model's and DuckDB's text: cut to their columns, made encodable."""
    return {"job_id": job.id, "attempt": job.attempt, "round": round_no, "tool": run.tool,
            "query_id": run.query_id, "sql": storable(run.input_text), "rows": run.rows,
            "cached": run.cached, "is_error": run.is_error, "error": storable(run.error),
            "ms": int(run.ms)}


def _write_trace(conn: DriverConnection, trace: UnwrittenTrace) -> None:
    # Each call row through the guarded INSERT..SELECT: a retry whose first commit landed
    # must not bill twice. Tool rows in one multi-row INSERT.
    if trace.calls:
        conn.execute(_INSERT_LLM_CALL_ONCE, trace.calls)
    if trace.tools:
        conn.execute(_INSERT_TOOL_CALL, trace.tools)


class JobStore:
    """The hot-path writes are prebuilt Core statements run on a pooled connection's
    DBAPI cursor (``shared/driver_sql.py``), not ORM units of work nor Core executions:
    the same SQL, at a fraction of the CPU (a 2-round job makes 9, in 4 transactions)."""

    def __init__(self, sessions: sessionmaker[Session], *, stale_after_s: float,
                 read_history: Callable[[DriverConnection, str, str], list[dict]] | None = None):
        """``read_history(conn, conversation_id, job_id)``, when given, is called in the
        claim's transaction: its turns come with the claimed job (``ClaimedJob.history``)."""
        self.sessions = sessions
        self.engine = sessions.kw["bind"]
        self.driver = DriverSQL(self.engine, ping_after_idle_s=UNPINGED_WITHIN_S)
        self._touch_in_finish = self.engine.dialect.name in job_state.MULTI_TABLE_UPDATES
        self.stale_after_s = stale_after_s
        self.read_history = read_history

    @_retry_claim
    def claim(self, job_id: str) -> ClaimedJob | None:
        """Move a queued (or abandoned running) job to running; None if someone else has it.

        Each claim increments ``attempt``: every later write of this run is guarded by
        it. The conversation's history is read in the same transaction (one checkout,
        one commit) when the store has a ``read_history``. Raises the database error
        after ~15 s of failed retries.
        """
        now = utcnow()
        stale = now - dt.timedelta(seconds=self.stale_after_s)
        with self.driver.begin() as conn:
            if not job_state.CLAIM.apply(conn, job_id=job_id, stale_before=stale, now=now):
                return None
            row = conn.execute(_CLAIMED, {"job_id": job_id}).one()
            if self.read_history is None:
                return ClaimedJob(*row)
            return ClaimedJob(*row, history=self.read_history(conn, row.conversation_id, job_id))

    def cancel_requested(self, job_id: str) -> bool:
        """Whether a cancel was asked for; False (logged) when the database does not answer,
        since the flag is checked again at the next round boundary."""
        try:
            with self.driver.begin() as conn:
                return job_state.cancel_was_asked(conn, job_id)
        except DBAPIError as exc:
            logger.warning("job %s: cancel flag not readable, going on: %s", job_id, exc)
            return False

    @_retry_db
    def record_calls(self, trace: UnwrittenTrace) -> None:
        """Store the LLM call rows ``trace`` holds, in one transaction, and drop them from
        it; retried through a short database outage, then raised (the rows stay held).
        Each row is stored once per (job, attempt, round) however often retried."""
        with self.driver.begin() as conn:
            conn.execute(_INSERT_LLM_CALL_ONCE, trace.calls)
        trace.calls.clear()

    @_retry_db
    def record_round(self, job: ClaimedJob, trace: UnwrittenTrace) -> bool:
        """Store the rows ``trace`` holds (a round's tool calls, and any LLM call not
        stored yet) in one transaction, then empty it; returns the job's cancel flag,
        read in the same transaction for the round boundary this write is made at.

        Retried through a short database outage, then raised (the rows stay in
        ``trace``); an LLM call row is stored once per (job, attempt, round) however
        often the write is retried.
        """
        with self.driver.begin() as conn:
            _write_trace(conn, trace)
            cancel = job_state.cancel_was_asked(conn, job.id)
        trace.clear()
        return cancel

    @_retry_db
    def finish(self, job: ClaimedJob, outcome: JobEnding,
               trace: UnwrittenTrace | None = None) -> Job | None:
        """Write the terminal state, the answer message and usage in one transaction,
        with the rows ``trace`` still holds (the last round's LLM call; the tool calls of
        a round an error ended), which are stored even when the job is no longer ours:
        they are what the calls used.

        Returns the finished job, or None when the job was no longer ours (already
        finished by another attempt, or reaped): only the trace is written then. The
        job is built from the claim and the ending (``finished_row``), not read back,
        except when an earlier try of this write had committed. Lost connections and
        lock conflicts are retried for up to two minutes, then raised; other database
        errors at once. The answer and error texts are made storable.
        """
        now = utcnow()
        ending = {
            "status": outcome.status,
            "answer_text": storable(outcome.answer_text, None), "charts": outcome.charts,
            "parse_path": outcome.parse_path, "truncated": outcome.truncated,
            "numbers": outcome.numbers, "error_code": outcome.error_code,
            "error_message": storable(outcome.error_message), "finished_at": now,
            "heartbeat_at": now, "data_as_of": outcome.data_as_of, **outcome.usage}
        with self.driver.begin() as conn:
            if trace:
                _write_trace(conn, trace)
            finished = self._write_ending(conn, job, outcome, ending)
        if trace:
            trace.clear()
        return finished

    def _write_ending(self, conn: DriverConnection, job: ClaimedJob, outcome: JobEnding,
                      ending: dict) -> Job | None:
        finish = job_state.FINISH_TOUCHING if self._touch_in_finish else job_state.FINISH
        if not finish.apply(conn, job_id=job.id, of_attempt=job.attempt,
                            now=ending["finished_at"], **ending):
            row = conn.execute(_JOB_ROW, {"job_id": job.id}).one_or_none()
            if self._already_written(conn, row, job, outcome):
                logger.warning("job %s attempt %s: an earlier try of this write committed",
                               job.id, job.attempt)
                return Job(**row._asdict())
            logger.warning("job %s attempt %s lost ownership; result discarded", job.id, job.attempt)
            return None
        if outcome.status == "succeeded":
            conn.execute(job_state.INSERT_MESSAGE, {
                "conversation_id": job.conversation_id, "job_id": job.id,
                "role": "assistant", "text": ending["answer_text"] or "",
                "charts": outcome.charts})
        if not self._touch_in_finish:
            conn.execute(job_state.TOUCH_CONVERSATION, {"conversation_id": job.conversation_id,
                                               "now": ending["finished_at"]})
        record_job(conn, job, outcome.status, at=ending["finished_at"],
                   policies=outcome.policies)
        return finished_row(job, ending)

    @staticmethod
    def _already_written(conn, row, job: ClaimedJob, outcome: JobEnding) -> bool:
        # A retried finish whose first commit landed but whose reply was lost finds the
        # row already holding this attempt's outcome; reporting it lets the terminal
        # event still be published. The reaper never writes messages or these codes.
        if row is None or row.attempt != job.attempt or row.status != outcome.status:
            return False
        if outcome.status == "succeeded":
            return bool(conn.scalar(_ANSWER_STORED, {"job_id": job.id}))
        return row.error_code == outcome.error_code
