"""The worker's job writes on real MariaDB: what is retried and what is stored."""
from __future__ import annotations

import time

import pytest
from sqlalchemy.exc import DBAPIError

from shared.db import session_factory
from shared.text_limits import TEXT_COLUMN_CHARS
from tests.utils.jobs import create_job, tool_calls
from worker.job_store import JobStore
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
        store.record_llm_call(claimed, 0, {}, "x" * 100, 5)
    assert info.value.orig.args[0] == 1406
    assert time.monotonic() - started < 5, "a permanent error is not retried for minutes"


def test_model_and_duckdb_text_is_stored_cut_and_encodable(settings, store, claimed):
    huge_error = "Invalid Input Error: " + "x" * 100_000
    run = ToolRun("execute_sql", "SELECT '\ud800' || " + "'y' || " * 4000 + "'z'",
                  "error: ...", is_error=True, error=huge_error, ms=1.0)
    store.record_tool_call(claimed, 1, run)
    (row,) = tool_calls(settings, claimed.id)
    assert row.sql.startswith("SELECT '\ufffd' || 'y'") and len(row.sql) < TEXT_COLUMN_CHARS + 50
    assert row.error.startswith("Invalid Input Error: xxx") and row.error.endswith("cut]")
    assert len(row.error) < TEXT_COLUMN_CHARS + 50
