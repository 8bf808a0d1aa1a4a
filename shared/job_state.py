"""A job's states and every change of them, each a guarded UPDATE that happens once.

The job row is the source of truth (the queue is only a wake-up), so every writer --
the API, the enqueuer, the batch rules, the worker, the reaper -- changes a job's
state through one of these transitions, never with an UPDATE of its own. A transition
changes the row only while its guard holds; the row count says whether it did, which
is how a redelivered message, a second reaper or a late worker learns it lost.

    transition   guard (the row must be ...)                          change
    -----------  ---------------------------------------------------  --------------------------
    (create)     --                                                   queued; enqueued_at now,
                                                                      unset, or held (batches)
    STAMP        any of job_ids                                       enqueued_at = sent_at
    RELEASE      held, one of job_ids                                 enqueued_at unset
    CLAIM        queued, or running with heartbeat before stale_before  running, attempt + 1
    BEAT         running under one of (id, attempt) pairs             heartbeat_at = now
    FINISH       running under of_attempt                             succeeded|failed|cancelled,
                                                                      with the answer and usage
                                                                      (FINISH_TOUCHING: and the
                                                                      conversation's updated_at)
    CANCEL       queued                                               cancelled
    ASK_CANCEL   running                                              cancel_requested
    REQUEUE      running under of_attempt, heartbeat before stale_before  queued, enqueued_at unset
    GIVE_UP      the same                                             failed worker_lost

``enqueued_at`` tells the reaper what to send: unset means "never reached the broker".

*Held* (a batch's job waiting for its turn) is a state kept in that timestamp column,
not in ``status``: the job is ``queued`` with a far-future ``enqueued_at``. Neither of
the reaper's rules ("never sent": unset; "sent too long ago": before a recent moment)
ever picks such a row up, so it waits until the batch releases it (RELEASE unsets the
column, and the enqueuer stamps it when sending) -- and no migration was needed to add
it. The date itself is private to this module: others ask :func:`is_held` of a row,
filter with :func:`held_clause` and create with :func:`held_values`. A later migration
could make it a real state (a ``held`` status or flag) by changing only those three.

A job is created with its question (the user message) in the same transaction, one
way: ``insert_job``'s prebuilt Core statements, on a connection (a submit) or inside a
Session's transaction (``create_job``: a batch, ``sunrise ask``).
"""
from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

from sqlalchemy import ColumnElement, and_, bindparam, func, insert, select, tuple_, update
from sqlalchemy.orm import Session
from sqlalchemy.sql import Update

from shared.models import Conversation, Job, Message, new_id, utcnow

STATUSES = ("queued", "running", "succeeded", "failed", "cancelled")
ACTIVE = ("queued", "running")
TERMINAL = ("succeeded", "failed", "cancelled")
# The enqueued_at of a held job; see "Held" in the module docstring.
_HELD_UNTIL_RELEASED = dt.datetime(9999, 12, 31)
CANCELLED_MESSAGE = "The job was cancelled at your request."

jobs, conversations = Job.__table__, Conversation.__table__
col = jobs.c
NOW = bindparam("now", type_=col.heartbeat_at.type)
STALE_BEFORE = bindparam("stale_before", type_=col.heartbeat_at.type)
OF_ATTEMPT = bindparam("of_attempt")
JOB_IDS = bindparam("job_ids", expanding=True)


@dataclasses.dataclass(frozen=True)
class Transition:
    """One guarded change, its statement built once (the hot path only binds values)."""

    name: str
    statement: Update

    def apply(self, db: Any, **params: Any) -> int:
        """Run it on ``db`` (a Connection, a Session or a ``shared.driver_sql``
        DriverConnection) in the caller's transaction; returns how many rows changed
        (0: the guard did not hold)."""
        return db.execute(self.statement, params).rowcount


def held_clause(job: Any = col) -> ColumnElement[bool]:
    """A SQL condition true exactly for held jobs (queued, waiting for their batch).

    ``job``: what has the job's ``status`` and ``enqueued_at`` columns -- the
    ``jobs`` table's columns (the default) or the ``Job`` model.
    """
    return and_(job.status == "queued", job.enqueued_at == _HELD_UNTIL_RELEASED)


def is_held(row: Any) -> bool:
    """Whether ``row`` (a ``Job`` or a row with its ``status`` and ``enqueued_at``) is
    held: queued, waiting for its batch to release it."""
    return row.status == "queued" and row.enqueued_at == _HELD_UNTIL_RELEASED


def held_values() -> dict[str, Any]:
    """The columns that make a new job start held: pass them to :func:`create_job`."""
    return {"enqueued_at": _HELD_UNTIL_RELEASED}


def _one(name: str, guard, **change) -> Transition:
    statement = update(jobs).where(col.id == bindparam("job_id"), guard)
    return Transition(name, statement.values(**change) if change else statement)


_STALE = (col.status == "running") & (col.attempt == OF_ATTEMPT) & (col.heartbeat_at < STALE_BEFORE)

STAMP = Transition("stamp", update(jobs).where(col.id.in_(JOB_IDS))
                   .values(enqueued_at=bindparam("sent_at", type_=col.enqueued_at.type)))
RELEASE = Transition("release", update(jobs).where(
    col.id.in_(JOB_IDS), held_clause()).values(enqueued_at=None))
CLAIM = _one("claim", (col.status == "queued")
             | ((col.status == "running") & (col.heartbeat_at < STALE_BEFORE)),
             status="running", attempt=col.attempt + 1, heartbeat_at=NOW,
             started_at=func.coalesce(col.started_at, NOW))
BEAT = Transition("beat", update(jobs).where(
    tuple_(col.id, col.attempt).in_(bindparam("pairs", expanding=True)), col.status == "running")
    .values(heartbeat_at=NOW))
# The SET clause comes from the parameters' keys: the terminal status, result and usage.
_RUNNING_UNDER = (col.status == "running") & (col.attempt == OF_ATTEMPT)
FINISH = _one("finish", _RUNNING_UNDER)
# FINISH moving the job's conversation to the top (updated_at = now) in the same
# statement: one round trip fewer per job than a separate UPDATE, where the database
# updates two tables in one statement (MULTI_TABLE_UPDATES). LEFT JOIN: a conversation
# that is gone never keeps the job from finishing. Its row count includes the
# conversation's row, so it is 0 exactly when the guard did not hold.
FINISH_TOUCHING = Transition("finish", update(
    jobs.outerjoin(conversations, conversations.c.id == col.conversation_id))
    .where(col.id == bindparam("job_id"), _RUNNING_UNDER)
    .values({conversations.c.updated_at: NOW}))
MULTI_TABLE_UPDATES = frozenset({"mysql", "mariadb"})
CANCEL = _one("cancel", col.status == "queued", status="cancelled", cancel_requested=True,
              finished_at=NOW, error_code="cancelled", error_message=CANCELLED_MESSAGE)
ASK_CANCEL = _one("ask_cancel", col.status == "running", cancel_requested=True)
REQUEUE = _one("requeue", _STALE, status="queued", enqueued_at=None)
GIVE_UP = _one("give_up", _STALE, status="failed", error_code="worker_lost", finished_at=NOW,
               error_message=bindparam("why"))

CANCEL_FLAG = select(col.cancel_requested).where(col.id == bindparam("job_id"))


def create_job(s: Session, *, tenant_id: int, conversation_id: str | None, message: str,
               model: str, enqueued_at: dt.datetime | None = None, **extra: Any) -> dict[str, Any]:
    """:func:`insert_job` in ``s``'s transaction: what ``s`` holds is flushed first (a
    batch's row, a conversation it started), then the job and its question are written.

    The one way a job is made, for callers holding a Session (a batch, ``sunrise ask``);
    returns the new job's columns as ``insert_job`` does.
    """
    s.flush()
    return insert_job(s.connection(), tenant_id=tenant_id, conversation_id=conversation_id,
                      message=message, model=model, enqueued_at=enqueued_at, **extra)


# A new job's columns as the model's defaults give them (id and created_at are set per
# job): what insert_job writes and returns.
_NEW_JOB = {c.name: c.default.arg if c.default is not None and c.default.is_scalar else None
            for c in jobs.columns}
_INSERT_JOB = insert(jobs)
# A conversation's message, and moving a conversation to the top of its list: written
# by a submit (here) and by a job's finish (worker/jobs/store.py), one statement each.
INSERT_MESSAGE = insert(Message.__table__)
_INSERT_CONVERSATION = insert(Conversation.__table__)
TOUCH_CONVERSATION = (update(conversations)
                      .where(conversations.c.id == bindparam("conversation_id"))
                      .values(updated_at=NOW))


def insert_job(conn: Any, *, tenant_id: int, conversation_id: str | None, message: str,
               model: str, enqueued_at: dt.datetime | None = None, **extra: Any) -> dict[str, Any]:
    """``create_job``, executed at once on ``conn`` (a Connection, in the caller's
    transaction) without the ORM; returns every column of the new job, as
    ``shared.job_view.job_to_dict`` reads them.

    Without ``conversation_id`` the question starts a conversation, titled after it; an
    existing conversation's ``updated_at`` is moved to now. Raises ``IntegrityError``
    when a unique key (the idempotency key) is taken.
    """
    now = utcnow()
    if conversation_id is None:
        conversation_id = new_id()
        conn.execute(_INSERT_CONVERSATION, {
            "id": conversation_id, "tenant_id": tenant_id, "title": _title(message),
            "user_id": extra.get("user_id"), "created_at": now, "updated_at": now})
    else:
        conn.execute(TOUCH_CONVERSATION, {"conversation_id": conversation_id, "now": now})
    job = {**_NEW_JOB, "id": new_id(), "tenant_id": tenant_id,
           "conversation_id": conversation_id, "message": message, "model": model,
           "enqueued_at": enqueued_at, "created_at": now, **extra}
    # Unset columns are left out, not sent as None: a JSON column would store 'null'.
    conn.execute(_INSERT_JOB, {name: value for name, value in job.items() if value is not None})
    conn.execute(INSERT_MESSAGE, {"conversation_id": conversation_id, "job_id": job["id"],
                                   "role": "user", "text": message, "created_at": now})
    return job


def _title(text: str) -> str:
    return text.strip()[:200]


def start_conversation(s: Session, tenant_id: int, title: str,
                       user_id: int | None = None) -> Conversation:
    """Add a new conversation of ``tenant_id`` (and of ``user_id``, if given) to ``s``,
    titled ``title`` (cut to fit)."""
    conversation = Conversation(id=new_id(), tenant_id=tenant_id, title=_title(title),
                                user_id=user_id)
    s.add(conversation)
    return conversation


def cancel_was_asked(conn: Any, job_id: str) -> bool:
    """Whether a cancel was asked for; raises ``DBAPIError`` when the database fails."""
    return bool(conn.scalar(CANCEL_FLAG, {"job_id": job_id}))

