"""The worker's job writes on real MariaDB: what is retried and what is stored."""
from __future__ import annotations

import datetime as dt
import subprocess
import sys
import threading
import time

import pytest
from sqlalchemy import event, update
from sqlalchemy.exc import DBAPIError

from shared import job_state
from shared.db import session_factory, session_scope
from shared.events import EventLog
from shared.job_view import job_to_dict
from shared.models import Conversation, Job, new_id
from shared.redis_client import redis_for
from shared.text_limits import TEXT_COLUMN_CHARS
from shared.usage_figures import CALL_FIELDS, CallUsage
from tests.utils.jobs import create_job, llm_calls, tool_calls
from worker.jobs.events import job_sink
from worker.jobs.hooks import JobHooks
from worker.jobs.runner import JobRunner
from worker.jobs.store import JobEnding, JobStore, UnwrittenTrace, call_row, tool_row
from worker.tools import ToolRun


@pytest.fixture
def store(settings) -> JobStore:
    return JobStore(session_factory(settings.database_url), stale_after_s=60)


@pytest.fixture
def claimed(settings, store):
    job_id, _ = create_job(settings, "How many flights?")
    return store.claim(job_id)


def test_a_write_the_database_refuses_is_raised_at_once_not_retried(store, claimed):
    started = time.monotonic()
    with pytest.raises(DBAPIError) as info:  # stop_reason is VARCHAR(32): 1406 every time
        store.record_round(claimed, UnwrittenTrace(calls=[call_row(claimed, 0, {}, "x" * 100, 5)]))
    assert info.value.orig.args[0] == 1406
    assert time.monotonic() - started < 5, "a permanent error is not retried for minutes"


def test_model_and_duckdb_text_is_stored_cut_and_encodable(settings, store, claimed):
    huge_error = "Invalid Input Error: " + "x" * 100_000
    run = ToolRun("execute_sql", "SELECT '\ud800' || " + "'y' || " * 4000 + "'z'",
                  "error: ...", is_error=True, error=huge_error, ms=1.0)
    store.record_round(claimed, UnwrittenTrace(tools=[tool_row(claimed, 1, run)]))
    (row,) = tool_calls(settings, claimed.id)
    assert row.sql.startswith("SELECT '\ufffd' || 'y'") and len(row.sql) < TEXT_COLUMN_CHARS + 50
    assert row.error.startswith("Invalid Input Error: xxx") and row.error.endswith("cut]")
    assert len(row.error) < TEXT_COLUMN_CHARS + 50


def _run_capturing_the_row(settings, job_id: str, *, ask_cancel: bool = False):
    """Run ``job_id`` with a real runner; returns the row its hooks were given and the
    row as then read from MariaDB."""
    runner = JobRunner(settings, events=EventLog(redis_for(settings.redis_url)))
    given = []
    runner.after_finish.append(given.append)
    if ask_cancel:  # asked while it runs: seen at the first round boundary
        claim = runner.store.claim

        def claim_then_ask(claimed_id):
            job = claim(claimed_id)
            with runner.store.engine.begin() as conn:
                assert job_state.ASK_CANCEL.apply(conn, job_id=claimed_id) == 1
            return job
        runner.store.claim = claim_then_ask
    runner.run(job_id)
    (row,) = given
    with session_scope(settings.database_url) as s:
        stored = s.get(Job, job_id)
        s.expunge(stored)
    return row, stored


@pytest.mark.parametrize("ending", ["succeeded", "failed", "cancelled"])
def test_the_finished_row_built_without_a_read_is_the_row_stored(settings, fake_llm, ending):
    job_id, _ = create_job(settings, "How many flights did each carrier fly?")
    with session_scope(settings.database_url) as s:  # a batch's job: the hooks read these
        s.execute(update(Job).where(Job.id == job_id).values(batch_id=new_id(), batch_index=3))
    if ending == "failed":
        fake_llm.fault("401", count=1)
    row, stored = _run_capturing_the_row(settings, job_id, ask_cancel=ending == "cancelled")
    assert stored.status == ending
    assert job_to_dict(row) == job_to_dict(stored)
    hooks_read = ("batch_id", "batch_index", "status", "error_code", "parse_path", "numbers",
                  "charts", "created_at", "started_at", "finished_at", "wall_ms")
    assert [getattr(row, name) for name in hooks_read] == \
        [getattr(stored, name) for name in hooks_read]
    if ending == "succeeded":  # the JSON columns and the money went through the check
        assert row.charts and row.numbers is not None and row.cost_usd > 0
    calls = llm_calls(settings, job_id)
    assert len(calls) == {"succeeded": 2, "failed": 0, "cancelled": 1}[ending]
    for name in CALL_FIELDS:  # the last call's row came with the final write
        assert getattr(stored, name) == sum(getattr(call, name) for call in calls), name


_FIRST_ROW_IN_A_FRESH_PROCESS = """
import datetime as dt
from shared.job_view import job_to_dict
from worker.jobs.store import ClaimedJob, finished_row
now = dt.datetime(2026, 12, 1)
job = ClaimedJob("j", 1, "c", "q", "m", 1, created_at=now, started_at=now)
row = finished_row(job, {"status": "succeeded", "answer_text": "a", "finished_at": now})
print(job_to_dict(row)["status"], row.queue, row.input_tokens)
"""


def test_a_workers_first_finished_row_is_a_usable_job(tmp_path):
    """The first row of a process (no ORM object made yet, so no mapper configured)
    reads like any other."""
    done = subprocess.run([sys.executable, "-c", _FIRST_ROW_IN_A_FRESH_PROCESS],
                          capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["succeeded", "None", "0"], done.stderr


def test_a_job_commits_its_tool_rounds_calls_and_boundaries_besides_claim_and_final_write(
        settings, fake_llm):
    job_id, _ = create_job(settings, "How many flights did each carrier fly?")
    runner = JobRunner(settings, events=EventLog(redis_for(settings.redis_url)))
    job_thread, transactions = threading.get_ident(), []

    def count(_dbapi_conn, _record, _proxy):
        # The store runs each transaction on a connection of its own checkout, on the
        # DBAPI cursor (shared/driver_sql.py): no Connection "commit" event to count.
        if threading.get_ident() == job_thread:
            transactions.append(_dbapi_conn)
    event.listen(runner.store.engine, "checkout", count)
    try:
        assert runner.run(job_id) == "succeeded"
    finally:
        event.remove(runner.store.engine, "checkout", count)
    # claim (+ history), round 0's call row (before its tool runs), its tool row + cancel
    # flag, final write + round 1's call
    assert len(transactions) == 4
    (call_0, call_1) = llm_calls(settings, job_id)
    (tool,) = tool_calls(settings, job_id)
    assert (call_0.round, tool.round, call_1.round) == (0, 1, 1)


def test_the_claim_brings_the_conversations_history_read_in_its_transaction(settings, fake_llm):
    runner = JobRunner(settings, events=EventLog(redis_for(settings.redis_url)))
    first_id, conversation_id = create_job(settings, "How many flights did each carrier fly?")
    assert runner.run(first_id) == "succeeded"
    second_id, _ = create_job(settings, "And per month?", conversation_id=conversation_id)
    job = runner.store.claim(second_id)
    with session_scope(settings.database_url) as s:
        answer = s.get(Job, first_id).answer_text
    assert job.history == [{"role": "user", "content": "How many flights did each carrier fly?"},
                           {"role": "assistant", "content": answer}]
    assert runner.history(job) is job.history, "not read a second time"
    assert JobStore(runner.store.sessions, stale_after_s=60).claim(create_job(
        settings, "Alone?")[0]).history is None, "a store without a reader reads none"


def test_a_call_asking_for_tools_is_stored_before_they_run_and_a_final_one_with_the_end(
        settings, store, claimed):
    # A worker that dies while a tool runs (up to the SQL time limit) must leave the paid
    # call's row; the last call has no tool after it and rides with the final write.
    hooks = JobHooks(claimed, store, job_sink(None), None)
    hooks.on_llm_call(0, CallUsage(input_tokens=100, output_tokens=7), "tool_use", 5)
    assert [call.round for call in llm_calls(settings, claimed.id)] == [0]
    assert not hooks.trace.calls
    hooks.on_llm_call(1, CallUsage(input_tokens=120, output_tokens=9), "end_turn", 5)
    assert [call.round for call in llm_calls(settings, claimed.id)] == [0]
    assert [row["round"] for row in hooks.trace.calls] == [1]


_LONG_AGO = dt.datetime(2020, 1, 1)


def _conversation_updated_at(settings, conversation_id: str, set_to=None):
    with session_scope(settings.database_url) as s:
        conversation = s.get(Conversation, conversation_id)
        if set_to is not None:
            conversation.updated_at = set_to
        return conversation.updated_at


def test_a_finish_moves_its_conversation_to_the_top_and_a_lost_one_leaves_it(settings, store):
    # The touch rides in the FINISH statement on MariaDB: it must happen exactly when the
    # guarded change does.
    job_id, conversation_id = create_job(settings, "How many flights?")
    job = store.claim(job_id)
    _conversation_updated_at(settings, conversation_id, set_to=_LONG_AGO)
    row = store.finish(job, JobEnding("failed", error_code="x", error_message="y"))
    assert row.status == "failed"
    assert _conversation_updated_at(settings, conversation_id) == row.finished_at

    _conversation_updated_at(settings, conversation_id, set_to=_LONG_AGO)
    assert store.finish(job, JobEnding("failed", error_code="z", error_message="y")) is None
    assert _conversation_updated_at(settings, conversation_id) == _LONG_AGO
    with session_scope(settings.database_url) as s:
        assert s.get(Job, job_id).error_code == "x", "the lost finish changed nothing"


def test_a_job_whose_conversation_is_gone_still_finishes(settings, store, claimed):
    with session_scope(settings.database_url) as s:
        s.delete(s.get(Conversation, claimed.conversation_id))
    row = store.finish(claimed, JobEnding("cancelled", error_code="cancelled",
                                          error_message="stop"))
    assert row is not None and row.status == "cancelled"
    with session_scope(settings.database_url) as s:
        assert s.get(Job, claimed.id).status == "cancelled"
