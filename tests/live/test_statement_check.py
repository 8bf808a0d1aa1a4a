"""The first layer: one read-only query in the engine's own dialect, parsed by sqlglot,
with each engine's refused functions. Pure: no database."""
from __future__ import annotations

import pytest

from engine.live import mysql, postgres
from engine.live.statement_check import StatementRefused, check_statement


def pg(sql: str) -> str:
    return check_statement(sql, "postgres", postgres.REFUSED, "PostgreSQL")


def my(sql: str) -> str:
    return check_statement(sql, "mysql", mysql.REFUSED, "MariaDB")


@pytest.mark.parametrize("sql", [
    "SELECT region, sum(amount) FROM orders GROUP BY region",
    "WITH t AS (SELECT * FROM orders) SELECT count(*) FROM t",
    "SELECT 1 UNION ALL SELECT 2",
    "VALUES (1), (2)",
    "SELECT * FROM generate_series(1, 3) AS g(n)",
    "SELECT now(), version(), lower(region) FROM orders",
])
def test_postgres_queries_pass(sql):
    assert pg(sql) == sql


def test_the_statement_comes_back_without_trailing_semicolons_and_comments():
    assert pg("  SELECT 1 -- why\n ; ; -- done\n") == "SELECT 1"
    assert my("SELECT 1; -- trailing") == "SELECT 1"


@pytest.mark.parametrize(("sql", "named"), [
    ("WITH d AS (DELETE FROM orders RETURNING *) SELECT * FROM d", "DELETE"),
    ("WITH i AS (INSERT INTO regions VALUES ('x', 'y') RETURNING *) SELECT 1", "INSERT"),
    ("WITH u AS (UPDATE orders SET qty = 0 RETURNING id) SELECT count(*) FROM u", "UPDATE"),
    ("DELETE FROM orders", "DELETE"),
    ("SELECT * INTO copy_of_orders FROM orders", "INTO"),
    ("SELECT * FROM orders FOR UPDATE", "locking"),
    ("SELECT * FROM (SELECT * FROM orders FOR SHARE) s", "locking"),
    ("COPY orders TO STDOUT", "COPY"),
    ("SELECT 1; SELECT 2", "2 statements"),
    ("SELECT 1; DROP TABLE orders", "2 statements"),
    ("SET statement_timeout = 0", "SET"),
    ("EXPLAIN ANALYZE DELETE FROM orders", "command"),
    ("DO $$ BEGIN DELETE FROM orders; END $$", "command"),
    ("SELECT pg_sleep(60)", "pg_sleep"),
    ("SELECT pg_catalog.pg_sleep_for('1 minute')", "pg_sleep_for"),
    ("SELECT pg_read_file('/etc/passwd')", "pg_read_file"),
    ("SELECT pg_ls_dir('.')", "pg_ls_dir"),
    ("SELECT lo_import('/etc/passwd')", "lo_import"),
    ("SELECT * FROM dblink('host=x', 'DELETE FROM t') AS t(a int)", "dblink"),
    ("SELECT set_config('statement_timeout', '0', false)", "set_config"),
    ("SELECT pg_terminate_backend(1)", "pg_terminate_backend"),
    ("SELECT nextval('counter')", "nextval"),
    ("SELECT pg_advisory_lock(1)", "pg_advisory_lock"),
    ("SELECT txid_current()", "txid_current"),
    ("SELECT query_to_xml('DELETE FROM orders', true, true, '')", "query_to_xml"),
    ("SELECT \"PG_SLEEP\"(1)", "PG_SLEEP"),
    ("", "no SQL"),
])
def test_postgres_refusals_name_why(sql, named):
    with pytest.raises(StatementRefused) as refused:
        pg(sql)
    assert named.lower() in refused.value.message.lower()


@pytest.mark.parametrize(("sql", "named"), [
    ("SELECT SLEEP(60)", "sleep"),
    ("SELECT BENCHMARK(100000000, md5('x'))", "benchmark"),
    ("SELECT LOAD_FILE('/etc/passwd')", "load_file"),
    ("SELECT GET_LOCK('a', 10)", "get_lock"),
    ("SELECT RELEASE_LOCK('a')", "release_lock"),
    ("SELECT MASTER_POS_WAIT('log', 4)", "master_pos_wait"),
    ("SELECT * FROM orders INTO OUTFILE '/tmp/orders.csv'", "INTO OUTFILE"),
    ("SELECT * FROM orders INTO DUMPFILE '/tmp/orders.bin'", "INTO DUMPFILE"),
    ("SELECT id INTO @x FROM orders LIMIT 1", "INTO"),
    ("SELECT * FROM orders LOCK IN SHARE MODE", "locking"),
    ("SELECT * FROM orders FOR UPDATE", "locking"),
    ("INSERT INTO audit VALUES (NOW())", "INSERT"),
    ("SELECT 1; SELECT 2", "2 statements"),
])
def test_mysql_refusals_name_why(sql, named):
    with pytest.raises(StatementRefused) as refused:
        my(sql)
    assert named.lower() in refused.value.message.lower()


def test_mysql_queries_pass():
    sql = "SELECT region, count(*) FROM orders WHERE placed >= NOW() - INTERVAL 1 DAY GROUP BY region"
    assert my(sql) == sql


def test_refused_function_lists_are_per_engine():
    # SLEEP is MySQL's; on PostgreSQL it does not exist, and pg_sleep is not MySQL's.
    assert pg("SELECT sleep(1)") == "SELECT sleep(1)"
    assert my("SELECT pg_sleep(1)") == "SELECT pg_sleep(1)"


@pytest.mark.parametrize("sql", [
    "SELECT 1 /*!, SLEEP(60) */",  # MariaDB/MySQL run the body of /*! */
    "SELECT id FROM orders /*!50000 INTO OUTFILE '/tmp/x' */",
    "SELECT 1 /*M!100000 , BENCHMARK(1e9, md5('x')) */",
    "/*! SELECT SLEEP(60) */ SELECT 1",
    "SELECT /*+ MAX_EXECUTION_TIME(600000) */ count(*) FROM orders",  # lifts the limit
])
@pytest.mark.parametrize("check", [my, pg])
def test_comments_a_server_would_run_are_refused(check, sql):
    with pytest.raises(StatementRefused) as refused:
        check(sql)
    assert "executable comments" in refused.value.message


def test_ordinary_comments_and_comment_like_strings_pass():
    assert my("SELECT 1 /* why */ + 1") == "SELECT 1 /* why */ + 1"
    assert pg("SELECT '/*! text */' AS t") == "SELECT '/*! text */' AS t"
