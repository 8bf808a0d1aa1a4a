"""Safety in depth on the real engines: each layer is tested on its own, the inner ones
through the engine's internal path that skips the statement check (``_execute``), so a
test fails when its layer is missing."""
from __future__ import annotations

import threading
import time

import pytest

from engine.live import open_engine
from shared.errors import SourceRefused
from tests.live.conftest import APP_DB, PASSWORD


def _wait_until(check, timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return False


# -- 1. the statement check, as the model meets it -----------------------------------------

@pytest.mark.parametrize("kind", ["postgresql", "mariadb"])
def test_a_delete_disguised_in_a_cte_is_refused_and_nothing_changes(kind, pg_source, maria_source,
                                                                     open_live):
    source = pg_source if kind == "postgresql" else maria_source
    engine = open_live(source.writer_url)
    result = engine.run("WITH gone AS (DELETE FROM regions RETURNING *) SELECT count(*) FROM gone",
                        tag="t")
    assert result.is_error
    assert "DELETE is not allowed" in result.error or "could not be read" in result.error
    assert source.admin_sql("SELECT count(*) FROM regions") == [(3,)]


def test_refused_functions_are_named_to_the_model(engine, source):
    sleep = "pg_sleep(60)" if source.kind == "postgresql" else "SLEEP(60)"
    started = time.monotonic()
    result = engine.run(f"SELECT {sleep}", tag="t")
    assert result.is_error and sleep.split("(")[0] in result.error
    assert not result.retryable  # the statement's fault: the same one fails again
    assert time.monotonic() - started < 1


# -- 2. the engine enforces read-only and the time limit itself ---------------------------

def test_postgres_refuses_writes_inside_the_read_only_transaction(pg_source, open_live):
    engine = open_live(pg_source.reader_url)
    (before,) = pg_source.admin_sql("SELECT last_value FROM counter")
    # The reader may use the sequence and run the function; only the transaction stops them.
    for sql in ("SELECT nextval('counter')", "SELECT stamp()"):
        result = engine._execute(sql, tag="t", budget_s=5)
        assert result.is_error and "read-only transaction" in result.error, result.error
    assert pg_source.admin_sql("SELECT last_value FROM counter") == [before]
    assert pg_source.admin_sql("SELECT count(*) FROM audit") == [(0,)]


def test_a_statement_that_turns_read_only_off_cannot_open_the_next_one(pg_source, open_live):
    """Had set_config slipped past the check (it is refused there), the session's
    read-only default it turned off is restored before the next statement runs, on the
    same pooled connection (the server reports the change: no round trip to ask)."""
    engine = open_live(pg_source.reader_url)
    (before,) = pg_source.admin_sql("SELECT last_value FROM counter")
    turned = engine._execute("SELECT set_config('default_transaction_read_only', 'off', false)",
                             tag="t", budget_s=5)
    assert not turned.is_error and turned.rows == [("off",)], turned
    result = engine._execute("SELECT nextval('counter')", tag="t2", budget_s=5)
    assert result.is_error and "read-only transaction" in result.error, result.error
    assert pg_source.admin_sql("SELECT last_value FROM counter") == [before]
    assert engine._pool.opened == 1  # the same connection, set right again


def test_mariadb_refuses_writes_inside_the_read_only_transaction(maria_source, open_live):
    engine = open_live(maria_source.writer_url)  # a role that may INSERT
    result = engine._execute("INSERT INTO audit VALUES (NOW())", tag="t", budget_s=5)
    assert result.is_error and "READ ONLY" in result.error, result.error
    assert maria_source.admin_sql("SELECT count(*) FROM audit") == [(0,)]


def test_a_second_statement_past_the_check_is_refused_by_the_server(source, open_live):
    """Were the parser fooled into passing two statements, the server still runs one:
    PostgreSQL gets the model's SQL through the extended protocol (which refuses a
    second command), MariaDB through a client without the multi-statement capability
    (the server reads it as one statement, and a wrong one)."""
    engine = open_live(source.writer_url)  # a role that may write
    # Shaped to close the row cap's wrapping "SELECT * FROM (...) LIMIT n" into three
    # statements of which the middle one writes.
    result = engine._execute("SELECT 1) AS a; INSERT INTO regions VALUES ('x', 'y'); "
                             "SELECT * FROM (SELECT 1", tag="t", budget_s=5)
    expected = ("cannot insert multiple commands" if source.kind == "postgresql"
                else "You have an error in your SQL syntax")
    assert result.is_error and expected in result.error, result
    assert source.admin_sql("SELECT count(*) FROM regions") == [(3,)]


def test_the_engine_kills_a_sleep_at_the_time_limit(source, engine):
    sleep = "pg_sleep(60)" if source.kind == "postgresql" else "SLEEP(60)"
    started = time.monotonic()
    result = engine._execute(f"SELECT {sleep}", tag="t", budget_s=1.0)
    elapsed = time.monotonic() - started
    assert result.is_error and "exceeded the 1 s limit" in result.error, result.error
    # Before the watchdog's grace: the engine's own timeout stopped it.
    assert elapsed < 1.0 + 0.8, elapsed
    assert _wait_until(lambda: not source.running(), 3)


def test_a_heavy_query_past_its_budget_is_stopped_on_the_engine(source, engine):
    heavy = ("SELECT count(*) FROM generate_series(1, 100000) a, generate_series(1, 100000) b"
             if source.kind == "postgresql" else
             "SELECT count(*) FROM seq_1_to_100000 a, seq_1_to_100000 b")
    started = time.monotonic()
    result = engine.run(heavy, tag="heavy", timeout_s=1.0)
    assert result.is_error and "limit" in result.error, result.error
    assert time.monotonic() - started < 3
    assert _wait_until(lambda: not source.running(), 3)


# -- 4. cancel from another thread ----------------------------------------------------------

def test_cancel_stops_the_query_on_the_engine(source, engine):
    sleep = "pg_sleep(30)" if source.kind == "postgresql" else "SLEEP(30)"
    results = []
    worker = threading.Thread(target=lambda: results.append(
        engine._execute(f"SELECT {sleep}", tag="job-1:q1", budget_s=20)))
    worker.start()
    # (Both engines show the statement itself.)
    assert _wait_until(lambda: bool(source.running()))
    started = time.monotonic()
    engine.cancel("job-1:q1")
    worker.join(10)
    assert not worker.is_alive() and time.monotonic() - started < 3
    assert results[0].is_error and results[0].error == "the query was cancelled"
    assert _wait_until(lambda: not source.running(), 3)
    # The connection it ran on is still good for the next query.
    assert engine.run("SELECT count(*) FROM regions", tag="next").rows == [(3,)]


def test_cancel_of_a_heavy_query_run_by_the_model(pg_source, open_live):
    engine = open_live(pg_source.reader_url)
    heavy = "SELECT count(*) FROM generate_series(1, 100000) a, generate_series(1, 100000) b"
    results = []
    worker = threading.Thread(target=lambda: results.append(
        engine.run(heavy, tag="job-2:q1", timeout_s=20)))
    worker.start()
    assert _wait_until(lambda: bool(pg_source.running()))
    engine.cancel("job-2:q1")
    worker.join(10)
    assert results and results[0].error == "the query was cancelled"
    assert _wait_until(lambda: not pg_source.running(), 3)


def test_a_tag_cancelled_before_its_query_starts_never_runs(engine):
    engine.cancel("job-3:q1")
    result = engine.run("SELECT count(*) FROM regions", tag="job-3:q1")
    assert result.is_error and result.error == "the query was cancelled"


# -- 3. a role that can write is found ------------------------------------------------------

def test_a_read_only_role_has_no_writable_privilege(source, engine):
    assert engine.writable_privilege(None) is None
    assert engine.writable_privilege(["orders", "regions"]) is None


def test_a_role_that_can_write_is_named(source, open_live):
    engine = open_live(source.writer_url)
    found = engine.writable_privilege(None)
    expected = ("INSERT on public.regions" if source.kind == "postgresql"
                else f"INSERT on {source.database}.*")
    assert found == expected
    if source.kind == "postgresql":  # scoped to the tables asked
        assert engine.writable_privilege(["orders"]) is None
        assert engine.writable_privilege(["regions"]) == "INSERT on public.regions"


def test_an_admin_role_is_found(source, open_live, outbound):
    import dataclasses

    if source.kind == "postgresql":
        url = f"postgresql://postgres@127.0.0.1:5432/{source.database}"
        assert open_live(url).writable_privilege(None) == "the role postgres is a superuser"
    else:
        url = f"mariadb://root@127.0.0.1:3306/{source.database}"
        assert open_live(url).writable_privilege(None).endswith(" on *.*")
    del dataclasses, outbound


# -- 5. where a source may be ----------------------------------------------------------------

@pytest.mark.parametrize("url", [
    f"mariadb://root@127.0.0.1:3306/{APP_DB}",  # the app's own database
    f"mysql://root@localhost:3306/{APP_DB}",
    "postgresql://u:p@10.1.2.3:5432/shop",  # private, not listed
    "postgresql://u:p@169.254.169.254:5432/shop",  # cloud metadata
])
def test_forbidden_destinations_are_refused_before_connecting(url, outbound):
    with pytest.raises(SourceRefused) as refused:
        open_engine(url, outbound=outbound)
    assert "p@" not in refused.value.detail


def test_the_app_redis_is_never_a_source(outbound, live_redis_url):
    with pytest.raises(SourceRefused) as refused:
        open_engine("postgresql://u:secret@127.0.0.1:6379/x", outbound=outbound)
    assert "Redis" in refused.value.detail and "secret" not in refused.value.detail


def test_password_never_appears_in_errors_or_logs(source, open_live, caplog):
    import logging

    caplog.set_level(logging.DEBUG)
    engine = open_live(source.reader_url)
    for sql in ("SELECT * FROM missing_table", f"SELECT nope AS \"{PASSWORD}\""):
        result = engine.run(sql, tag="t")
        assert result.is_error and PASSWORD not in result.error
    assert PASSWORD not in caplog.text


def test_an_executable_comment_never_reaches_mariadb(maria_source, open_live):
    """MariaDB runs the body of /*! */: the check refuses it before the engine sees it
    (sqlglot alone reads it as a comment, and the SLEEP in it would run)."""
    engine = open_live(maria_source.reader_url)
    started = time.monotonic()
    result = engine.run("SELECT 1 /*!, SLEEP(5) */", tag="t")
    assert result.is_error and "executable comments" in result.error, result
    assert time.monotonic() - started < 1
