"""Every file format the engine takes, each written here by its own real tooling."""
from __future__ import annotations

import datetime as dt
import decimal
import json
import sqlite3

import duckdb
import openpyxl
import pytest

from api.problems import http_status
from engine.datasets import FileSource
from shared.errors import EmptySource, MalformedSource, UnsupportedSource
from tests.datasets.conftest import column_types, query
from tests.utils.dataset_files import duckdb_file


def test_parquet_keeps_its_types(tmp_path, build):
    path = tmp_path / "trips.parquet"
    con = duckdb.connect()
    con.execute(f"""COPY (SELECT i AS trip_id, CAST(i * 1.5 AS DECIMAL(9, 2)) AS fare,
                    DATE '2024-01-01' + CAST(i AS INTEGER) AS day, CASE WHEN i % 3 = 0 THEN NULL ELSE i END AS n
                    FROM range(10) t(i)) TO '{path}' (FORMAT parquet)""")
    built = build(path)
    assert column_types(built.path, "trips") == {
        "trip_id": "BIGINT", "fare": "DECIMAL(9,2)", "day": "DATE", "n": "BIGINT"}
    assert query(built.path, "SELECT sum(fare), count(n) FROM trips") == [
        (decimal.Decimal("67.50"), 6)]


def test_a_file_that_only_claims_to_be_parquet_is_refused(write, build):
    with pytest.raises(MalformedSource, match=r"fake\.parquet is not a valid Parquet file"):
        build(write("fake.parquet", "id,name\n1,a\n"))


def test_json_array_and_ndjson(write, build):
    array = write("people.json", '[{"name": "Ann", "age": 31, "tags": ["a", "b"]},'
                                 ' {"name": "Bo", "age": null}]')
    lines = write("events.ndjson", '{"kind": "click", "at": "2024-01-02 10:00:00"}\n'
                                   '{"kind": "view", "at": "2024-01-03 11:00:00"}\n')
    built = build(array, lines)
    assert column_types(built.path, "people") == {
        "name": "VARCHAR", "age": "BIGINT", "tags": "VARCHAR[]"}
    assert query(built.path, "SELECT age, len(tags) FROM people WHERE name = 'Ann'") == [
        (31, 2)]
    assert column_types(built.path, "events")["at_"] == "TIMESTAMP"  # "at" is a keyword


def test_nested_json_objects_become_columns_and_lists_stay_lists(tmp_path, build):
    records = [
        {"id": 1, "user": {"name": "Ann", "country": "DE", "address": {"city": "Berlin"}},
         "user_name": "ann77", "tags": ["a", "b"], "items": [{"sku": "x", "qty": 2}],
         "deep": {"a": {"b": {"c": {"d": {"e": 1}}}}}},
        {"id": 2, "user": {"name": "Bo", "country": None, "address": None},
         "user_name": "bo", "tags": [], "items": [], "deep": None},
    ]
    path = tmp_path / "orders.ndjson"
    path.write_text("\n".join(json.dumps(record) for record in records) + "\n")
    built = build(path)
    types = column_types(built.path, "orders")
    assert list(types) == ["id", "user_name", "user_country", "user_address_city",
                           "user_name_2", "tags", "items", "deep_a_b_c_d"]
    assert types["tags"] == "VARCHAR[]" and types["items"].endswith("[]")
    assert types["deep_a_b_c_d"].startswith("STRUCT")  # deeper than the cap: kept whole
    assert query(built.path, "SELECT user_name, user_country, user_address_city, user_name_2, "
                             "len(tags) FROM orders ORDER BY id") == [
        ("Ann", "DE", "Berlin", "ann77", 2), ("Bo", None, None, "bo", 0)]
    notes = {c.name: c.note for c in built.tables[0].columns}
    assert notes["user_address_city"] == "From `user.address.city` in the file."
    assert notes["user_name_2"] is None and notes["id"] is None


def test_malformed_ndjson_names_its_line(write, build):
    with pytest.raises(MalformedSource) as caught:
        build(write("broken.ndjson", '{"a": 1}\n{"a": 2}\n{"a": \n'))
    assert "broken.ndjson" in caught.value.detail and caught.value.extra.get("line")


@pytest.mark.parametrize("content, error", [("42", MalformedSource), ("[]", EmptySource),
                                            ("  \n", EmptySource)])
def test_json_that_holds_no_records_is_refused(write, build, content, error):
    with pytest.raises(error, match=r"numbers\.json"):
        build(write("numbers.json", content))


def test_xlsx_sheets_become_tables_with_excel_types(tmp_path, build):
    workbook = openpyxl.Workbook()
    orders = workbook.active
    orders.title = "Orders 2024"
    orders.append(["Order ID", "Amount ($)", "Ordered", "Paid?", "Note", "Mixed"])
    orders.append([1, 10.5, dt.date(2024, 1, 2), True, "rush", 1])
    orders.append([2, 11, dt.datetime(2024, 1, 3, 10, 30), False, None, "x"])
    orders.append([3, "NA", None, None, "NA", 2.5])
    orders.append([None, None, None, None, None, None])  # a blank row: skipped
    workbook.create_sheet("Empty")
    customers = workbook.create_sheet("Customers")
    customers.append(["id", "name"])
    customers.append([1, "Ann"])
    path = tmp_path / "Shop.xlsx"
    workbook.save(path)
    built = build(path)
    assert [t.name for t in built.tables] == ["shop_customers", "shop_orders_2024"]
    assert column_types(built.path, "shop_orders_2024") == {
        "order_id": "BIGINT", "amount": "DOUBLE", "ordered": "TIMESTAMP", "paid": "BOOLEAN",
        "note": "VARCHAR", "mixed": "VARCHAR"}
    assert query(built.path, "SELECT sum(amount), count(note), string_agg(mixed, '|' ORDER BY "
                             "order_id) FROM shop_orders_2024") == [(21.5, 1, "1|x|2.5")]


def test_a_workbook_with_one_sheet_is_named_after_the_file(tmp_path, build):
    workbook = openpyxl.Workbook()
    workbook.active.append(["day", "n"])
    workbook.active.append([dt.date(2024, 5, 1), 3])
    path = tmp_path / "daily.xlsx"
    workbook.save(path)
    built = build(path)
    assert column_types(built.path, "daily") == {"day": "DATE", "n": "BIGINT"}


def test_sqlite_types_come_from_what_is_stored(tmp_path, build):
    path = tmp_path / "shop.sqlite"
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT, price REAL, qty INTEGER,
                            in_stock BOOLEAN, added DATE, code INTEGER, photo BLOB);
        INSERT INTO items VALUES (1, 'pen', 1.5, 10, 1, '2024-01-02', 7, x'00ff'),
                                 (2, 'ink', 3, NULL, 0, '2024-02-03', 'A7', NULL),
                                 (3, NULL, NULL, 5, NULL, NULL, 9, NULL);
        CREATE TABLE "Order Lines" (item_id INTEGER, n INTEGER);
        INSERT INTO "Order Lines" VALUES (1, 2);
    """)
    con.commit()
    con.close()
    built = build(path)
    assert [t.name for t in built.tables] == ["items", "order_lines"]
    assert column_types(built.path, "items") == {
        "id": "BIGINT", "name": "VARCHAR", "price": "DOUBLE", "qty": "BIGINT",
        "in_stock": "BOOLEAN", "added": "DATE", "code": "VARCHAR", "photo": "BLOB"}
    assert query(built.path, "SELECT sum(price), sum(qty), count(in_stock), max(added), "
                             "string_agg(code, ',' ORDER BY id) FROM items") == [
        (4.5, 15, 2, dt.date(2024, 2, 3), "7,A7,9")]
    assert not list(tmp_path.glob("shop.sqlite-*")), "the upload is opened read-only"


def test_duckdb_file_copies_base_tables_not_views(tmp_path, build):
    path = duckdb_file(
        tmp_path / "warehouse.duckdb",
        "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')",
        "CREATE TABLE visits (id INTEGER, feeling mood, \"at\" TIMESTAMP, tags VARCHAR[])",
        "INSERT INTO visits VALUES (1, 'ok', '2024-01-01 08:00', ['a']), (2, 'happy', NULL, [])",
        "CREATE SCHEMA staging",
        "CREATE TABLE staging.visits (id INTEGER)",
        "INSERT INTO staging.visits VALUES (9)",
        "CREATE VIEW secrets AS SELECT * FROM read_text('/etc/hostname')",
    )
    built = build(path)
    assert [t.name for t in built.tables] == ["staging_visits", "visits"]
    assert column_types(built.path, "visits") == {
        "id": "INTEGER", "feeling": "VARCHAR", "at_": "TIMESTAMP", "tags": "VARCHAR[]"}
    assert query(built.path, "SELECT feeling FROM visits ORDER BY id") == [("ok",), ("happy",)]


def test_a_db_file_is_told_apart_by_its_first_bytes(tmp_path, build):
    lite = tmp_path / "a.db"
    con = sqlite3.connect(lite)
    con.execute("CREATE TABLE t_lite (x INTEGER)")
    con.commit()
    con.close()
    duck = duckdb_file(tmp_path / "b.db", "CREATE TABLE t_duck (y INTEGER)")
    built = build(lite, duck)
    assert [t.name for t in built.tables] == ["t_duck", "t_lite"]
    neither = tmp_path / "c.db"
    neither.write_text("neither SQLite nor DuckDB")
    with pytest.raises(UnsupportedSource, match=r"c\.db"):
        build(neither, version=2)


def test_an_unsupported_type_is_refused_before_anything_is_written(write, build, data_dir):
    with pytest.raises(UnsupportedSource) as caught:
        build(write("ok.csv", "a\n1\n"), write("report.docx", b"PK\x03\x04 not a table"))
    assert http_status(caught.value) == 415 and "report.docx" in caught.value.detail
    assert ".csv" in caught.value.detail  # says what would work
    assert not data_dir.exists() or not list(data_dir.rglob("*"))


def test_tables_from_many_files_get_unique_names(write, build):
    built = build(FileSource(write("a.csv", "x\n1\n"), "sales.csv"),
                  FileSource(write("b.csv", "x\n2\n"), "Sales.csv"),
                  FileSource(write("c.json", '[{"x": 3}]'), "sales.json"))
    assert [t.name for t in built.tables] == ["sales", "sales_2", "sales_3"]
    assert [s["tables"] for s in built.sources] == [["sales"], ["sales_2"], ["sales_3"]]
    assert [s["file"] for s in built.sources] == ["sales.csv", "Sales.csv", "sales.json"]
