from __future__ import annotations

import json

import duckdb
import pytest

from engine.sql.guard import SqlRefused, check_single_read_statement, parse_tree


@pytest.mark.parametrize("sql", [
    "SELECT 1",
    "select carrier, count(*) from flights group by 1",
    "WITH a AS (SELECT 1 AS x) SELECT x FROM a",
    "FROM flights LIMIT 3",
    "VALUES (1, 'a'), (2, 'b')",
    "SHOW TABLES",
    "DESCRIBE flights",
    "SUMMARIZE flights",
    "(SELECT 1) UNION ALL (SELECT 2)",
    "PIVOT flights ON origin IN ('EWR', 'JFK') USING count(*) GROUP BY carrier",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r",
    "SELECT * FROM flights WHERE carrier IN (SELECT carrier FROM airlines)",
    "SELECT table_name, column_name FROM information_schema.columns",
    "SELECT * FROM duckdb_tables()",
    "SELECT * FROM range(3)",
])
def test_read_statements_pass_unchanged(sql):
    assert check_single_read_statement(sql) == sql


@pytest.mark.parametrize(("sql", "cleaned"), [
    ("  SELECT 1 ;  \n", "SELECT 1"),
    ("SELECT 1;;", "SELECT 1"),
    ("SELECT 1; -- done", "SELECT 1"),
    ("select 1 -- note;\n", "select 1"),
    ("/* lead */ SELECT 1; /* trail */", "/* lead */ SELECT 1"),
    ("SELECT 'a;--b' AS s; -- c", "SELECT 'a;--b' AS s"),
    ('SELECT 1 AS "x;"', 'SELECT 1 AS "x;"'),
])
def test_cleaning_strips_only_trailing_noise(sql, cleaned):
    assert check_single_read_statement(sql) == cleaned


@pytest.mark.parametrize("sql", ["SELECT 1; -- done", "SELECT 'a;--b' AS s -- c", "SELECT 2 /* x */;"])
def test_cleaned_statement_nests_as_a_subquery(sql):
    cleaned = check_single_read_statement(sql)
    con = duckdb.connect()
    assert con.execute(f"SELECT count(*) FROM (\n{cleaned}\n)").fetchall() == [(1,)]


@pytest.mark.parametrize(("sql", "kind"), [
    ("COPY flights TO '/tmp/x.csv'", "COPY"),
    ("ATTACH ':memory:' AS m", "ATTACH"),
    ("DETACH m", "DETACH"),
    ("INSTALL httpfs", "LOAD"),
    ("LOAD httpfs", "LOAD"),
    ("SET memory_limit='10GB'", "SET"),
    ("RESET threads", "SET"),
    ("USE other", "SET"),
    ("PRAGMA database_list", "PRAGMA"),
    ("CREATE TABLE t (a INTEGER)", "CREATE"),
    ("CREATE VIEW v AS SELECT 1", "CREATE"),
    ("INSERT INTO flights SELECT * FROM flights", "INSERT"),
    ("UPDATE flights SET year = 1", "UPDATE"),
    ("DELETE FROM flights", "DELETE"),
    ("DROP TABLE flights", "DROP"),
    ("ALTER TABLE flights ADD COLUMN z INTEGER", "ALTER"),
    ("EXPORT DATABASE '/tmp/dump'", "EXPORT"),
    ("CALL pragma_version()", "CALL"),
    ("CHECKPOINT", "CALL"),
    ("BEGIN TRANSACTION", "TRANSACTION"),
    ("PREPARE p AS SELECT 1", "PREPARE"),
])
def test_non_read_statements_are_refused_by_kind(sql, kind):
    with pytest.raises(SqlRefused) as info:
        check_single_read_statement(sql)
    assert kind in info.value.message
    assert "read-only" in info.value.message
    assert str(info.value) == info.value.message


@pytest.mark.parametrize("sql", ["EXPLAIN SELECT 1", "EXPLAIN ANALYZE SELECT 1"])
def test_explain_is_refused_with_a_hint(sql):
    with pytest.raises(SqlRefused, match="run the query itself"):
        check_single_read_statement(sql)


def test_pivot_without_in_list_is_refused_with_a_hint():
    with pytest.raises(SqlRefused, match="IN"):
        check_single_read_statement("PIVOT flights ON origin USING count(*)")


@pytest.mark.parametrize("sql", ["SELECT 1; SELECT 2", "SELECT 1; DROP TABLE flights", "SELECT 1;\nSELECT 2;"])
def test_more_than_one_statement_is_refused(sql):
    with pytest.raises(SqlRefused, match=r"exactly one statement.*2 were sent"):
        check_single_read_statement(sql)


@pytest.mark.parametrize("sql", ["", "   ", ";", " ; ; ", "-- just a comment", "/* nothing */"])
def test_empty_sql_is_refused(sql):
    with pytest.raises(SqlRefused, match="empty"):
        check_single_read_statement(sql)


@pytest.mark.parametrize("sql", ["SELEC 1", "SELECT FROM WHERE", "SELECT 'unterminated", "SELECT 1 INTO x"])
def test_parse_errors_carry_the_parser_message(sql):
    with pytest.raises(SqlRefused) as info:
        check_single_read_statement(sql)
    assert info.value.message.startswith("the SQL does not parse: ")
    assert "Parser Error" in info.value.message


@pytest.mark.parametrize("value", [None, 42, b"SELECT 1"])
def test_non_strings_are_refused(value):
    with pytest.raises(SqlRefused, match="string"):
        check_single_read_statement(value)


@pytest.mark.parametrize(("sql", "kind"), [
    # DuckDB classifies all of these as SELECT: only the parse tree shows the write.
    ("WITH x AS (INSERT INTO flights SELECT * FROM flights RETURNING *) SELECT count(*) FROM x",
     "INSERT"),
    ("WITH x AS (UPDATE airlines SET name = 'x' RETURNING *) SELECT * FROM x", "UPDATE"),
    ("WITH x AS (DELETE FROM airlines RETURNING *) SELECT * FROM x", "DELETE"),
    ("SELECT (WITH x AS (INSERT INTO airlines VALUES ('X', 'x') RETURNING *) SELECT 1)",
     "INSERT"),
])
def test_writes_nested_inside_a_select_are_refused(sql, kind):
    assert duckdb.extract_statements(sql)[0].type == duckdb.StatementType.SELECT
    with pytest.raises(SqlRefused) as info:
        check_single_read_statement(sql)
    assert kind in info.value.message and "read-only" in info.value.message


@pytest.mark.parametrize(("sql", "name"), [
    ("SELECT * FROM duckdb_settings()", "duckdb_settings"),
    ("SELECT value FROM system.main.duckdb_settings() WHERE name = 'home_directory'",
     "duckdb_settings"),
    ("SELECT current_setting('temp_directory')", "current_setting"),
    ("SELECT CURRENT_SETTING('home_directory') AS h", "current_setting"),
    ("SELECT path FROM duckdb_databases()", "duckdb_databases"),
    ("SELECT * FROM duckdb_databases", "duckdb_databases"),
    ("SELECT * FROM pragma_database_list", "pragma_database_list"),
    ("SELECT * FROM pg_catalog.pg_settings", "pg_settings"),
    ("SUMMARIZE duckdb_databases", "duckdb_databases"),
    ("SELECT * FROM duckdb_extensions()", "duckdb_extensions"),
    ("SELECT * FROM duckdb_temporary_files()", "duckdb_temporary_files"),
    ("SELECT * FROM duckdb_secrets()", "duckdb_secrets"),
    ("SELECT * FROM flights WHERE year IN (SELECT length(path) FROM duckdb_databases())",
     "duckdb_databases"),
    # SQL given as text would be run unchecked.
    ("SELECT * FROM query('SELECT * FROM duckdb_settings()')", "query"),
    ("SELECT * FROM query_table('flights')", "query_table"),
])
def test_metadata_that_describes_the_host_is_denied(sql, name):
    with pytest.raises(SqlRefused) as info:
        check_single_read_statement(sql)
    assert f"{name}" in info.value.message


@pytest.mark.parametrize("sql", ["SELECT '\ud800' AS broken", "SELECT 1 AS \"\udfff\""])
def test_text_that_is_not_unicode_is_refused(sql):
    with pytest.raises(SqlRefused, match="not valid Unicode"):
        check_single_read_statement(sql)


@pytest.mark.parametrize("sql", [
    "SELECT 'it''s' AS a, '\\' AS b, $$x'y$$ AS c",
    "SELECT 'x'); SELECT 1; --' AS breakout",
    "SELECT E'\\'' AS e, 'é中😀' AS u",
    "SELECT 'a\x00b' AS nul",
    "SELECT\n'multi\nline' AS m /* 'quoted' */",
    "WITH x AS (INSERT INTO airlines VALUES ('X', 'it''s') RETURNING *) SELECT * FROM x",
])
def test_the_statement_reaches_the_parse_tree_whole(sql):
    # The tree is asked for through a prepared statement that takes the text as a string
    # literal: quotes, backslashes and NUL must not change what the guard reads.
    reference = duckdb.connect().execute("SELECT json_serialize_sql(?)", [sql]).fetchone()[0]
    assert parse_tree(sql) == json.loads(reference)
