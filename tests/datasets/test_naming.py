"""Table and column names a model can write without quotes, unique in their scope."""
from __future__ import annotations

import duckdb
import pytest

from engine.datasets.naming import MAX_LENGTH, NameBook, sanitise


@pytest.mark.parametrize("raw, safe", [
    ("Orders 2024", "orders_2024"),
    ("Amount ($)", "amount"),
    ("  --weird--  ", "weird"),
    ("Straße Größe", "strasse_grosse"),
    ("Café Crème", "cafe_creme"),
    ("2024 totals", "d_2024_totals"),
    ("order", "order_"),
    ("select", "select_"),
    ("left", "left_"),
    ("time", "time"),  # a keyword DuckDB still takes as a bare column name
    ("数据", "data"),
    ("", "data"),
])
def test_sanitise(raw, safe):
    assert sanitise(raw) == safe


def test_every_safe_name_works_unquoted_in_duckdb():
    con = duckdb.connect()
    book = NameBook()
    names = [book.claim(raw) for raw in ("order", "group", "left", "Year", "x" * 100, "1st",
                                         "user", "values", "where", "Ünïcödé")]
    for name in names:
        assert len(name) <= MAX_LENGTH
        con.execute(f"CREATE TABLE {name} ({name} INTEGER)")
        con.execute(f"INSERT INTO {name} VALUES (1)")
        assert con.execute(f"SELECT {name} FROM {name} WHERE {name} = 1").fetchall() == [(1,)]


def test_clashes_are_numbered_case_insensitively_and_stay_short():
    book = NameBook()
    assert [book.claim(n) for n in ("Sales", "sales", "SALES!", "sales_2")] == [
        "sales", "sales_2", "sales_3", "sales_2_2"]
    long = "y" * 80
    first, second = book.claim(long), book.claim(long)
    assert first == "y" * MAX_LENGTH and second.endswith("_2") and len(second) == MAX_LENGTH
