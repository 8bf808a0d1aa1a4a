from __future__ import annotations

import datetime as dt
import decimal

import duckdb
import pytest

from engine.sql.query_result import MAX_CELL_CHARS, ColumnSummary
from engine.sql.result_sql import read_summary, summary_candidates, summary_sql
from engine.sql.result_text import format_error, format_result, format_value


def test_small_result_lists_every_row_and_no_summary():
    text = format_result(3, ["carrier", "flights", "avg_delay"],
                         [("UA", 58665, 12.1), ("B6", 54635, 13.02249)], 2, None)
    assert text == "query_id=3 rows=2 shown=2\ncarrier,flights,avg_delay\nUA,58665,12.1\nB6,54635,13.0225"


def test_exactly_25_rows_has_no_summary():
    rows = [(i,) for i in range(25)]
    text = format_result(1, ["n"], rows, 25, [ColumnSummary("n", 25, 300, 0, 24, 12.0)])
    assert "summary" not in text
    assert text.splitlines()[0] == "query_id=1 rows=25 shown=25"
    assert len(text.splitlines()) == 27


def test_large_result_shows_25_rows_then_the_summary():
    rows = [(f"c{i}", i) for i in range(5000)]
    summary = [ColumnSummary("flights", 10000, 336776, 1, 58665, 33.6776)]
    text = format_result(3, ["carrier", "flights"], rows, 10000, summary)
    lines = text.split("\n")
    assert lines[0] == "query_id=3 rows=10000 shown=25"
    assert lines[1] == "carrier,flights"
    assert lines[2:27] == [f"c{i},{i}" for i in range(25)]
    assert lines[27:] == ["", "summary over all 10000 rows", "column,count,total,min,max,avg",
                          "flights,10000,336776,1,58665,33.68"]


def test_large_result_without_numeric_columns_prints_only_the_summary_line():
    rows = [("x",)] * 30
    text = format_result(7, ["name"], rows, 30, [])
    assert text.endswith("x\n\nsummary over all 30 rows")
    assert "column,count" not in text


def test_empty_result_has_header_only():
    assert format_result(2, ["a", "b"], [], 0, None) == "query_id=2 rows=0 shown=0\na,b"


def test_csv_quoting_and_nulls():
    rows = [("b, c", None, 'say "hi"', "two\nlines")]
    text = format_result(1, ["k", "v", "q", "m"], rows, 1, None)
    assert text.split("\n", 2)[2] == '"b, c",,"say ""hi""","two\nlines"'


def test_error_text():
    assert format_error("Catalog Error: no table x") == "error: Catalog Error: no table x"


@pytest.mark.parametrize(("value", "text"), [
    (None, ""),
    (True, "true"),
    (False, "false"),
    (0, "0"),
    (-12, "-12"),
    (12345678901234567890123, "12345678901234567890123"),
    (12.1, "12.1"),
    (12.1000001, "12.1"),
    (2.0, "2"),
    (1 / 3, "0.3333"),
    (-0.00001, "-1e-05"),
    (-0.0, "0"),
    (1e20, "1e+20"),
    (float("nan"), "NaN"),
    (float("inf"), "Infinity"),
    (decimal.Decimal("12.3400"), "12.34"),
    (decimal.Decimal("5.00"), "5"),
    (decimal.Decimal("1.23456"), "1.2346"),
    (dt.date(2013, 1, 1), "2013-01-01"),
    (dt.datetime(2013, 1, 1, 5, 0), "2013-01-01T05:00:00"),
    (dt.time(12, 30), "12:30:00"),
    ([1, 2], "[1, 2]"),
    ({"a": 1}, '{"a": 1}'),
    (b"\x01\xff", "\\x01ff"),
])
def test_value_rendering(value, text):
    assert format_value(value) == text


def test_avg_uses_two_decimals():
    assert format_value(33.6776, decimals=2) == "33.68"
    assert format_value(12.5, decimals=2) == "12.5"


def test_long_cells_are_capped():
    assert format_value("x" * 5000) == "x" * MAX_CELL_CHARS + "…"


def test_candidates_follow_type_and_name_rules():
    columns = ["carrier_id", "Zip_CODE", "row_pk", "amount", "price", "note", "paid", "day", "n"]
    types = ["INTEGER", "VARCHAR", "BIGINT", "DECIMAL(10,2)", "DOUBLE", "VARCHAR", "BOOLEAN",
             "DATE", "HUGEINT"]
    picked = summary_candidates(columns, types)
    assert [(i, name) for i, name, _ in picked] == [(3, "amount"), (4, "price"), (5, "note"), (8, "n")]


def _run_summary(inner: str) -> tuple[int, list[ColumnSummary]]:
    con = duckdb.connect()
    con.execute(inner)
    columns = [d[0] for d in con.description]
    types = [str(d[1]) for d in con.description]
    row = con.execute(summary_sql(inner, columns, types)).fetchall()[0]
    return read_summary(columns, types, row)


def test_summary_sql_counts_numeric_values_over_the_whole_result():
    inner = """SELECT i AS thing_id, i * 2 AS doubled,
                      CASE WHEN i % 4 = 0 THEN 'n/a' ELSE CAST(i AS VARCHAR) END AS text_num,
                      CASE WHEN i % 4 = 0 THEN CAST(i AS VARCHAR) ELSE 'n/a' END AS mostly_text,
                      CASE WHEN i <= 50 THEN i END AS half_null,
                      i % 2 = 0 AS flag
               FROM range(1, 101) t(i) -- trailing comment"""
    total, summaries = _run_summary(inner)
    assert total == 100
    by_name = {s.column: s for s in summaries}
    assert set(by_name) == {"doubled", "text_num"}  # half_null is exactly half: not more
    assert by_name["doubled"] == ColumnSummary("doubled", 100, 10100, 2, 200, 101.0)
    text_num = by_name["text_num"]
    assert text_num.count == 75
    assert text_num.total == sum(i for i in range(1, 101) if i % 4)
    assert (text_num.min, text_num.max) == (1, 99)


def test_summary_sql_handles_duplicate_and_odd_column_names():
    total, summaries = _run_summary('SELECT 1 AS "a b", 2 AS "a b", 3 AS ")" FROM range(30)')
    assert total == 30
    assert [(s.column, s.total) for s in summaries] == [("a b", 30), ("a b", 60), (")", 90)]


def test_summary_sql_with_no_candidates_still_counts():
    total, summaries = _run_summary("SELECT DATE '2024-01-01' + CAST(i AS INTEGER) AS d FROM range(40) t(i)")
    assert (total, summaries) == (40, [])
