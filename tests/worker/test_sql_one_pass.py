"""A result over 25 rows of a statement that does not stream runs that statement once,
and what it gives is what running it twice (rows, then summary) gave, to the byte.

The reference is the two-query way, forced in an executor in this process; the same
statements run once in another in-process executor and through a real SQL process
(``SqlSandbox``), each on its own copy of the database (one DuckDB configuration per
file per process)."""
from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from engine.sql import executor as sql_executor
from engine.sql.executor import DuckDbExecutor
from engine.sql.result_text import result_text
from engine.sql.sandbox import SqlSandbox
from engine.sql.shape import repeats_cheaply

CHART_ROWS = 200
RESULT_BYTES = 100_000
BIG_ROWS = 300_000  # several row groups: scans and aggregates run on both threads

CORPUS = [
    "SELECT * FROM t ORDER BY id",
    "SELECT g, count(*) AS n, sum(dec) AS total, avg(f) AS avg_f FROM t GROUP BY g ORDER BY g",
    "SELECT g, d, count(*) AS n, sum(big) AS big_total, min(ts) AS first_ts "
    "FROM t GROUP BY g, d ORDER BY g, d",
    "SELECT DISTINCT g, flag FROM t ORDER BY ALL",
    "SELECT a.id, b.id AS other_id, a.f + b.f AS f2 FROM t a JOIN t b "
    "ON a.g = b.g AND a.id < b.id ORDER BY a.id, b.id LIMIT 500",
    "SELECT n_null, s, id FROM t ORDER BY n_null NULLS FIRST, id",
    "SELECT * FROM t WHERE id < 0 ORDER BY id",
    "SELECT id, f FROM t ORDER BY id LIMIT 25",
    "SELECT id, f FROM t ORDER BY id LIMIT 26",
    "SELECT id, f FROM t ORDER BY id DESC LIMIT 24",
    "SELECT id, repeat('x', 1000) AS a, repeat('y', 1000) AS b FROM t ORDER BY id",
    # Wide enough that DuckDB cuts the listed rows at the byte budget as it goes.
    "SELECT id, " + ", ".join(f"repeat('{i}', 900 + id) AS w{i}" for i in range(10))
    + " FROM t ORDER BY id LIMIT 120",
    "SELECT id, g, sum(f) OVER (PARTITION BY g ORDER BY id) AS running FROM t ORDER BY id",
    "SELECT id % 1000 AS k, count(*) AS n, sum(f) AS f, avg(dec) AS dec, max(g) AS g "
    "FROM big GROUP BY k ORDER BY k",
    "SELECT * FROM big ORDER BY f DESC, id",
    "SELECT * FROM big ORDER BY f DESC, id LIMIT 100",
    "SELECT g FROM t UNION SELECT 'zz' ORDER BY 1",
    "SELECT s, amount_code, u, id FROM t ORDER BY id",
    "SELECT id, lst, {'a': id, 'b': [g]} AS st, blob, long_text, d, ts, dec, big FROM t "
    "ORDER BY id",
    "SELECT g, count(*) AS n FROM t GROUP BY g ORDER BY g -- a trailing comment",
    "SELECT id, CAST(9e37 AS DECIMAL(38, 0)) AS huge FROM t GROUP BY id ORDER BY id",
    "SELECT g, sum(CAST(s AS INTEGER)) AS bad FROM t GROUP BY g ORDER BY g",
    "SELECT " + ", ".join(f"id + {i} AS c{i}" for i in range(120)) + " FROM t ORDER BY id",
    "SELECT id, g FROM t",  # these three repeat cheaply: they run twice as before
    "SELECT id, f FROM big WHERE id % 7 = 0",
    "SELECT id, f FROM big ORDER BY f, id",
]

# Rows in an order DuckDB does not fix (ties; no ORDER BY): running twice gave them in
# either order too, so only the rows as a set and the rest of the result must agree.
ANY_ORDER = [
    "SELECT g, count(*) AS n FROM t GROUP BY g ORDER BY n DESC",
    "SELECT g, d, count(*) AS n, sum(dec) AS total FROM t GROUP BY ALL",
    "SELECT id % 500 AS k, count(*) AS n FROM big GROUP BY k",
]


def _make_db(path: Path) -> Path:
    con = duckdb.connect(str(path))
    try:
        con.execute("""
            CREATE TABLE t AS SELECT
                i AS id,
                ['north', 'south', 'east', 'west', 'up'][1 + i % 5] AS g,
                CASE WHEN i % 9 = 0 THEN i END AS n_null,
                DATE '2024-01-01' + CAST(i % 40 AS INTEGER) AS d,
                TIMESTAMP '2024-01-01 08:30:00' + to_minutes(CAST(i AS BIGINT)) AS ts,
                CAST(i * 1.125 AS DECIMAL(18, 3)) AS dec,
                CAST(i AS HUGEINT) * 1000000000000000000000 AS big,
                i / 3.0 AS f,
                CASE WHEN i % 4 = 0 THEN 'n/a' ELSE CAST(i * 2.5 AS VARCHAR) END AS s,
                CAST(10000 + i AS VARCHAR) AS amount_code,
                i % 2 = 0 AS flag,
                [i, NULL, i * 2] AS lst,
                repeat('z', 990 + i) AS long_text,
                CAST('\\xAA' || CAST(i AS VARCHAR) AS BLOB) AS blob,
                CAST(i AS UBIGINT) * 1000000000 AS u
            FROM range(1, 151) AS r(i)""")
        # Halves sum exactly in any order, so threads cannot change a digit.
        con.execute(f"""
            CREATE TABLE big AS SELECT i AS id, (i % 97) * 0.5 AS f,
                CAST(i % 1000 AS DECIMAL(10, 2)) AS dec, 'g' || (i % 13) AS g
            FROM range({BIG_ROWS}) AS r(i)""")
        con.execute("CHECKPOINT")
    finally:
        con.close()
    return path


@pytest.fixture(scope="module")
def corpus_dbs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    base = tmp_path_factory.mktemp("one_pass")
    first = _make_db(base / "corpus-0.duckdb")
    copies = [first]
    for index in (1, 2, 3):
        copies.append(Path(shutil.copy(first, base / f"corpus-{index}.duckdb")))
    return copies


def _executor(path: Path, tmp_path: Path, *, one_pass: bool) -> DuckDbExecutor:
    """An executor whose plans all run once (``one_pass``) or all run twice."""
    executor = DuckDbExecutor(path, memory_limit="512MB", threads=2,
                              temp_directory=str(tmp_path / f"spill-{one_pass}"),
                              max_temp_size="100MB", chart_row_limit=CHART_ROWS,
                              result_max_bytes=RESULT_BYTES)
    original = executor._plan

    def plan(cursor, text, cleaned):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(sql_executor, "repeats_cheaply", lambda _statement: not one_pass)
            return original(cursor, text, cleaned)

    executor._plan = plan
    return executor


def _seen(result) -> tuple:
    """Everything a result carries but the time it took."""
    return (result_text(result, 7), result.sql, result.columns, result.types, result.rows,
            result.total_rows, result.summary, result.total_columns, result.is_error,
            result.error)


@pytest.fixture(scope="module")
def three_ways(corpus_dbs, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("one_pass_spill")
    twice = _executor(corpus_dbs[0], tmp, one_pass=False)
    once = _executor(corpus_dbs[1], tmp, one_pass=True)
    sandbox = SqlSandbox(corpus_dbs[2], timeout_s=20.0, chart_row_limit=CHART_ROWS,
                         result_max_bytes=RESULT_BYTES, threads=2)
    try:
        yield twice, once, sandbox
    finally:
        sandbox.close()
        once.close()
        twice.close()


@pytest.mark.parametrize("sql", CORPUS)
def test_running_once_gives_what_running_twice_gave(three_ways, sql):
    twice, once, sandbox = three_ways
    reference = twice.run(sql, 20.0)
    assert _seen(once.run(sql, 20.0)) == _seen(reference)
    assert _seen(sandbox.run(sql)) == _seen(reference)
    assert _seen(once.run(sql, 20.0)) == _seen(reference), "and again, from its plan"


@pytest.mark.parametrize("sql", ANY_ORDER)
def test_rows_in_no_fixed_order_are_the_same_rows(three_ways, sql):
    twice, once, sandbox = three_ways
    reference = _in_any_order(twice.run(sql, 20.0))
    assert _in_any_order(once.run(sql, 20.0)) == reference
    assert _in_any_order(sandbox.run(sql)) == reference


def _in_any_order(result) -> tuple:
    text = result_text(result, 7).split("\n")
    shown = int(text[0].rsplit("shown=", 1)[1])
    return (text[:2], text[2 + shown:], sorted(result.rows), result.total_rows,
            result.summary, result.columns, result.types)


def test_the_corpus_covers_what_it_claims(three_ways):
    twice, _once, _sandbox = three_ways
    results = {sql: twice.run(sql, 20.0) for sql in CORPUS}
    totals = {result.total_rows for result in results.values()}
    assert {0, 25, 26} <= totals and max(totals) == BIG_ROWS
    assert any(result.summary for result in results.values())
    assert any(len(result.rows) < min(result.total_rows, CHART_ROWS)
               for result in results.values() if not result.is_error), "the byte budget cut"
    errors = [result for result in results.values() if result.is_error]
    assert len(errors) == 1 and "Could not convert" in errors[0].error
    overflowed = results[next(sql for sql in CORPUS if "9e37" in sql)]
    assert overflowed.total_rows == 150 and overflowed.summary is None
    # The sandbox runs once or twice by its own choice; it makes both here.
    assert 0 < sum(map(repeats_cheaply, CORPUS)) < len(CORPUS)


def test_a_result_over_25_rows_is_one_statement(corpus_dbs, tmp_path, monkeypatch):
    executor = DuckDbExecutor(corpus_dbs[3], memory_limit="512MB", threads=2,
                              temp_directory=str(tmp_path / "spill"), max_temp_size="100MB",
                              chart_row_limit=CHART_ROWS, result_max_bytes=RESULT_BYTES)
    sql = "SELECT g, d, count(*) AS n FROM t GROUP BY g, d ORDER BY g, d"
    try:
        executor.run(sql, 20.0)  # planned: binding is not a run
        statements = []
        original = executor._con.cursor

        class Counting:
            def __init__(self) -> None:
                self._cursor = original()

            def execute(self, query, *args):
                statements.append(query)
                return self._cursor.execute(query, *args)

            def __getattr__(self, name):
                return getattr(self._cursor, name)

        monkeypatch.setattr(executor, "_con", type("Con", (), {"cursor": Counting})())
        result = executor.run(sql, 20.0)
    finally:
        monkeypatch.undo()
        executor.close()
    assert result.total_rows == 40 and result.summary
    assert len(statements) == 1


def test_a_statement_whose_result_needs_no_summary_runs_its_rows_alone_next_time(three_ways):
    twice, once, _sandbox = three_ways
    sql = "SELECT g, count(*) AS n FROM t GROUP BY g ORDER BY g"
    first = once.run(sql, 20.0)
    assert first.total_rows == 5 and once._plans.get(sql).one_pass is None
    assert _seen(once.run(sql, 20.0)) == _seen(first) == _seen(twice.run(sql, 20.0))
    bigger = "SELECT id, count(*) AS n FROM t GROUP BY id ORDER BY id"
    once.run(bigger, 20.0)
    assert once._plans.get(bigger).one_pass is not None


@pytest.mark.parametrize("sql, expected", [
    ("SELECT a FROM t", True),
    ("SELECT a FROM t ORDER BY a", True),
    ("SELECT a FROM (SELECT a FROM t ORDER BY a LIMIT 5) x", False),
    ("SELECT a FROM t WHERE b > 1 LIMIT 50", True),
    ("SELECT * FROM t JOIN u USING (k)", True),
    ("SELECT a FROM t UNION ALL SELECT a FROM u", True),
    ("SELECT a, count(*) FROM t GROUP BY a", False),
    ("SELECT a, count(*) FROM t GROUP BY ALL", False),
    ("SELECT DISTINCT a FROM t", False),
    ("SELECT a FROM t ORDER BY a LIMIT 10", False),
    ("SELECT a, row_number() OVER () FROM t", False),
    ("SELECT a FROM t UNION SELECT a FROM u", False),
    ("SELECT a FROM t EXCEPT SELECT a FROM u", False),
    ("SELECT * FROM (SELECT a, sum(b) FROM t GROUP BY a) x JOIN u USING (a)", False),
    ("PIVOT t ON a IN (1, 2) USING sum(b)", False),
])
def test_which_statements_repeat_cheaply(sql, expected):
    assert repeats_cheaply(sql) is expected
