"""A live Spark dataset against a real Spark Connect server (local mode, 127.0.0.1).

Tables are saved in the server's own warehouse (a temporary directory) by an admin
Connect session; the engine opens its own session, as a worker would. Results are
compared with the DuckDB sandbox's over the same rows, so ``execute_sql`` renders the
same text. Each safety layer has a test that fails without it. Nothing is mocked.
"""
from __future__ import annotations

import threading
import time

import duckdb
import pytest

from engine.live import LiveLimits, open_engine
from engine.live.spark_sql import check_spark_statement
from engine.live.statement_check import StatementRefused
from engine.sql.result_text import result_text
from engine.sql.sandbox import SqlSandbox
from shared.outbound import OutboundPolicy

pytestmark = pytest.mark.slow

ORDERS = 3000
# The same rows in Spark and in DuckDB: id BIGINT, region VARCHAR, amount DECIMAL(10,2),
# qty INTEGER, note VARCHAR (NULL every tenth row).
ORDERS_SELECT = (
    "SELECT id, CASE WHEN id % 3 = 0 THEN 'north' WHEN id % 3 = 1 THEN 'south' "
    "ELSE 'west' END AS region, CAST(id * 1.5 AS DECIMAL(10,2)) AS amount, "
    "CAST(id % 7 AS INT) AS qty, CASE WHEN id % 10 = 0 THEN NULL ELSE 'note' END AS note "
    f"FROM range(1, {ORDERS + 1}) AS r(id)")
LIMITS = LiveLimits(timeout_s=60.0, chart_row_limit=100, result_max_bytes=200_000,
                    max_concurrent_queries=4)
# Long enough to still run when cancelled (4e10 pairs), small in memory (a broadcast
# side of 200k longs).
LONG_QUERY = ("SELECT count(*) AS n FROM range(0, 200000) AS a CROSS JOIN range(0, 200000) "
              "AS b WHERE a.id + b.id > 7")


@pytest.fixture(scope="session")
def admin(spark_server):
    """The data owner's own Connect session: creates and changes the tables."""
    from pyspark.sql.connect.session import SparkSession

    session = SparkSession.builder.remote(spark_server.url).create()
    session.sql(f"CREATE TABLE orders USING parquet AS {ORDERS_SELECT}")
    session.sql("CREATE TABLE events (id BIGINT, kind STRING) USING parquet")
    session.sql("INSERT INTO events VALUES (1, 'open'), (2, 'close')")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def policy():
    return OutboundPolicy(allow=(), forbidden=())


@pytest.fixture(scope="session")
def allowed(spark_server):
    from shared.outbound import AllowEntry

    return OutboundPolicy(allow=(AllowEntry.parse("127.0.0.1"),), connect_timeout_s=5,
                          read_timeout_s=60)


@pytest.fixture
def engine(spark_server, admin, allowed):
    engine = open_engine(spark_server.url, outbound=allowed, limits=LIMITS)
    yield engine
    engine.close()


@pytest.fixture(scope="session")
def sandbox(tmp_path_factory):
    path = tmp_path_factory.mktemp("duck") / "orders.duckdb"
    con = duckdb.connect(str(path))
    con.execute(f"CREATE TABLE orders AS {ORDERS_SELECT}")
    con.close()
    box = SqlSandbox(path, timeout_s=30, chart_row_limit=LIMITS.chart_row_limit,
                     result_max_bytes=LIMITS.result_max_bytes, processes=1)
    yield box
    box.close()


def test_engine_names_spark_and_its_version(engine):
    assert engine.name == "spark" and engine.dialect == "spark"
    assert engine.server_version().startswith("Spark 4.")
    info = engine.engine_info()
    assert info == {"name": "Spark", "version": engine.server_version().split(" ")[1],
                    "dialect": "spark"}
    assert engine.writable_privilege(["orders"]) is None  # no role model to inspect


def test_the_host_is_checked_before_connecting(spark_server, policy):
    from shared.errors import SourceRefused

    with pytest.raises(SourceRefused, match="SUNRISE_OUTBOUND_ALLOW"):
        open_engine(spark_server.url, outbound=policy, limits=LIMITS)


@pytest.mark.parametrize("sql", [
    # 4 rows: no summary.
    "SELECT qty % 4 AS k, count(*) AS n, sum(amount) AS total FROM orders "
    "GROUP BY qty % 4 ORDER BY k",
    # 60 rows, fetched whole: the summary over the fetched rows.
    "SELECT id, amount, qty, note FROM orders WHERE id <= 60 ORDER BY id",
    # 3000 rows, past the row cap: the summary computed by Spark over all of them.
    "SELECT id, region, amount, qty FROM orders ORDER BY id",
    # Numbers as text, summarised as the sandbox does (more than half numeric).
    "SELECT CAST(qty AS STRING) AS qty_text, note FROM orders ORDER BY id",
])
def test_results_render_as_the_sandbox_renders_them(engine, sandbox, sql):
    live, snap = engine.run(sql, tag="t"), sandbox.run(sql)
    assert not live.is_error, live.error
    assert not snap.is_error, snap.error
    # Types may differ where the engines do (Spark sums DECIMAL(10,2) as DECIMAL(20,2),
    # DuckDB as DECIMAL(38,2)); the text the model reads may not.
    assert live.total_rows == snap.total_rows
    assert result_text(live, 1) == result_text(snap, 1)


def test_the_summary_covers_the_whole_result_exactly(engine):
    big = engine.run("SELECT id, region, amount, qty FROM orders ORDER BY id", tag="t")
    assert big.total_rows == ORDERS and len(big.rows) == LIMITS.chart_row_limit
    assert [s.column for s in big.summary] == ["id", "amount", "qty"]
    ids = big.summary[0]
    assert (ids.count, ids.total, ids.min, ids.max) == (ORDERS, ORDERS * (ORDERS + 1) // 2,
                                                          1, ORDERS)


def test_rows_inserted_after_opening_are_answered_without_a_refresh(engine, admin):
    count = "SELECT count(*) AS n FROM events"
    before = engine.run(count, tag="t").rows[0][0]
    admin.sql("INSERT INTO events VALUES (10, 'late')")
    assert engine.run(count, tag="t").rows[0][0] == before + 1


def test_introspection_profiles_a_bounded_sample(engine):
    (orders,) = engine.introspect(["orders"], sample_rows=1000)
    assert orders.rows == 1000
    types = {c.name: c.type for c in orders.columns}
    assert types == {"id": "BIGINT", "region": "VARCHAR", "amount": "DECIMAL(10,2)",
                     "qty": "INTEGER", "note": "VARCHAR"}
    region = next(c for c in orders.columns if c.name == "region")
    assert region.distinct == 3 and {t.value for t in region.top_values} == {
        "north", "south", "west"}
    note = next(c for c in orders.columns if c.name == "note")
    assert note.null_fraction == 0.1


@pytest.mark.parametrize(("sql", "why"), [
    ("CREATE TABLE made USING parquet AS SELECT 1 AS a", "not CREATE"),
    ("ADD JAR /tmp/evil.jar", "a command"),
    ("CACHE TABLE orders", "CACHE"),
    ("SET spark.sql.ansi.enabled=false", "SET"),
    ("SELECT reflect('java.lang.System', 'exit', '0')", "reflect()"),
    ("SELECT * FROM parquet.`/etc`", "reading files"),
    ("SELECT TRANSFORM(id) USING 'cat' AS (x) FROM orders", "TRANSFORM"),
])
def test_the_statement_check_refuses_commands_and_functions(engine, sql, why):
    with pytest.raises(StatementRefused, match=why.replace("(", r"\(").replace(")", r"\)")):
        check_spark_statement(sql)
    result = engine.run(sql, tag="t")
    assert result.is_error and why in result.error


def test_the_engine_only_ever_plans_a_query(engine, admin):
    """The layer under the statement check: a command that got past it (run here without
    the check) is refused by Spark's parser and runs nothing, where ``spark.sql`` would
    have created the table at once."""
    result = engine._execute("CREATE TABLE sneaked USING parquet AS SELECT 1 AS a",
                             tag="t", budget_s=30, deadline=time.monotonic() + 30,
                             started=time.perf_counter(), label="t")
    assert result.is_error and "PARSE_SYNTAX_ERROR" in result.error
    assert not admin.catalog.tableExists("sneaked")


def test_a_cancelled_query_ends_on_the_server(engine, admin, spark_server):
    results = []
    worker = threading.Thread(target=lambda: results.append(
        engine.run(LONG_QUERY, tag="job-c", timeout_s=300)))
    worker.start()
    time.sleep(8)  # planned and running its tasks
    assert worker.is_alive()
    engine.cancel("job-c")
    worker.join(60)
    assert not worker.is_alive()
    assert results[0].is_error and results[0].error == "the query was cancelled"
    _assert_cluster_idle(admin, spark_server)


def test_a_query_past_its_time_limit_is_interrupted_on_the_server(engine, admin,
                                                                    spark_server):
    started = time.monotonic()
    result = engine.run(LONG_QUERY, tag="job-t", timeout_s=6)
    assert result.is_error and "exceeded the 6 s limit" in result.error
    assert time.monotonic() - started < 40
    _assert_cluster_idle(admin, spark_server)


def test_a_tag_cancelled_before_it_runs_is_refused(engine):
    engine.cancel("early")
    result = engine.run("SELECT 1 AS x", tag="early")
    assert result.is_error and "cancelled" in result.error


def _assert_cluster_idle(admin, spark_server) -> None:
    """The cancelled job's tasks are gone: both of local[2]'s task slots answer a small
    job at once (they would be busy for minutes otherwise), and Spark logged the cancel."""
    started = time.monotonic()
    assert admin.sql("SELECT sum(id) AS s FROM range(0, 1000, 1, 2)").collect()[0][0] == 499500
    assert time.monotonic() - started < 20
    log = spark_server.log.read_text(errors="replace")
    assert "cancel" in log.lower()

