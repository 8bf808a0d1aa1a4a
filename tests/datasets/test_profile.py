"""The profile computed in DuckDB: counts a person can check by hand, JSON-ready values."""
from __future__ import annotations

import json

import duckdb
import pytest

from engine.datasets import TableProfile, profile_tables
from engine.datasets.profile import LOW_CARDINALITY, TOP_VALUES


@pytest.fixture
def con():
    con = duckdb.connect()
    con.execute("""
        CREATE TABLE sales AS SELECT
            i AS sale_id,
            ['north', 'south', 'east', 'west', 'east'][1 + i % 5] AS region,
            CASE WHEN i % 4 = 0 THEN NULL ELSE CAST(i % 10 AS DECIMAL(6, 2)) END AS amount,
            DATE '2024-01-01' + CAST(i % 30 AS INTEGER) AS day,
            TIMESTAMP '2024-01-01 08:00:00' + to_minutes(i) AS at_,
            i % 2 = 0 AS paid,
            [i, i + 1] AS pair,
            md5(CAST(i AS VARCHAR)) AS hash
        FROM range(20000) t(i)""")
    con.execute("CREATE TABLE empty (x INTEGER, y VARCHAR)")
    yield con
    con.close()


def _column(table: TableProfile, name: str):
    return next(c for c in table.columns if c.name == name)


def test_counts_and_top_values_are_exact_for_low_cardinality(con):
    empty, sales = profile_tables(con)
    assert (empty.name, sales.name, sales.rows) == ("empty", "sales", 20_000)
    region = _column(sales, "region")
    assert region.type == "VARCHAR" and region.distinct == 4 and region.null_fraction == 0
    assert [(t.value, t.count) for t in region.top_values] == [
        ("east", 8000), ("north", 4000), ("south", 4000), ("west", 4000)]  # ties by value
    assert region.values_complete and (region.min, region.max) == ("east", "west")
    amount = _column(sales, "amount")
    assert amount.null_fraction == 0.25 and amount.distinct == 10
    assert (amount.min, amount.max) == (0.0, 9.0)
    day = _column(sales, "day")
    assert (day.min, day.max, day.distinct) == ("2024-01-01", "2024-01-30", 30)
    assert len(day.top_values) == TOP_VALUES and not day.values_complete
    assert _column(sales, "paid").top_values[0].count == 10_000


def test_high_cardinality_columns_get_an_estimate_and_no_top_values(con):
    (sales,) = profile_tables(con, ["sales"])
    for name in ("sale_id", "hash", "at_"):
        column = _column(sales, name)
        assert column.distinct > LOW_CARDINALITY and column.top_values == ()
        assert abs(column.distinct - 20_000) / 20_000 < 0.05, (name, column.distinct)
    assert _column(sales, "at_").min == "2024-01-01T08:00:00"


def test_nested_columns_get_counts_only(con):
    (sales,) = profile_tables(con, ["sales"])
    pair = _column(sales, "pair")
    assert pair.type == "BIGINT[]" and pair.null_fraction == 0
    assert pair.min is None and pair.max is None and pair.top_values == ()


def test_an_empty_table(con):
    (empty,) = profile_tables(con, ["empty"])
    assert empty.rows == 0
    assert [(c.name, c.null_fraction, c.distinct, c.top_values) for c in empty.columns] == [
        ("x", 0.0, 0, ()), ("y", 0.0, 0, ())]


def test_a_profile_survives_json(con):
    tables = profile_tables(con)
    stored = json.loads(json.dumps([t.as_dict() for t in tables]))
    assert [TableProfile.from_dict(t) for t in stored] == tables
    assert set(stored[1]["columns"][0]) == {"name", "type", "null_fraction", "distinct", "min",
                                            "max", "top_values"}


def test_a_wide_table_counts_values_of_every_column():
    """More low-cardinality columns than one GROUPING_ID mask holds (64 bits)."""
    con = duckdb.connect()
    select = ", ".join(f"(i + {n}) % {n % 5 + 2} AS c{n:02d}" for n in range(70))
    con.execute(f"CREATE TABLE wide AS SELECT {select} FROM range(1000) t(i)")
    (wide,) = profile_tables(con)
    assert [c.distinct for c in wide.columns] == [n % 5 + 2 for n in range(70)]
    assert all(sum(t.count for t in c.top_values) == 1000 for c in wide.columns)


def test_import_notes_ride_along_and_a_stored_profile_without_them_reads_back_the_same():
    import json

    from engine.datasets.profile import ImportNotes, TableProfile
    plain = {"name": "t", "rows": 2, "columns": [
        {"name": "amount", "type": "DOUBLE", "null_fraction": 0.0, "distinct": 2, "min": 1.0,
         "max": 2.0, "top_values": [{"value": 1.0, "count": 1}]}]}
    assert json.loads(json.dumps(TableProfile.from_dict(plain).as_dict())) == plain
    notes = ImportNotes({"amount": {"original": "text like `$1.00`", "format": "currency",
                                    "suggestion": {"type": "DATE", "format": "%d/%m/%Y",
                                                   "label": "treat as date?"}}},
                        "1 totals row left out.", ["column x stayed text: mixed dates"])
    noted = TableProfile.from_dict(plain).with_notes(notes)
    stored = noted.as_dict()
    assert stored["columns"][0]["original"] == "text like `$1.00`"
    assert stored["columns"][0]["suggestion"] == {"type": "DATE", "format": "%d/%m/%Y",
                                                  "label": "treat as date?"}
    assert "note" not in stored["columns"][0]
    assert stored["note"] == "1 totals row left out."
    assert stored["warnings"] == ["column x stayed text: mixed dates"]
    assert TableProfile.from_dict(stored) == noted
