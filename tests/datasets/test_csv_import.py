"""CSV/TSV through DuckDB's sniffer: types a person would trust, and faults named by line."""
from __future__ import annotations

import datetime as dt
import decimal
import gzip

import duckdb
import pytest

from shared.errors import EmptySource, MalformedSource
from tests.datasets.conftest import column_types, query


def test_a_numeric_column_with_na_values_arrives_numeric(write, build):
    """The classic failure: NA in a numeric column must not turn it into text."""
    path = write("scores.csv", "id,score,ratio\n1,NA,0.5\n2,17,NA\n3,NULL,0.25\n4,,1.5\n5,9,\n")
    built = build(path)
    types = column_types(built.path, "scores")
    assert types == {"id": "BIGINT", "score": "BIGINT", "ratio": "DOUBLE"}
    assert query(built.path, "SELECT sum(score), count(score), avg(ratio) FROM scores") == [
        (26, 2, 0.75)]
    (table,) = built.tables
    score = next(c for c in table.columns if c.name == "score")
    assert score.null_fraction == 0.6 and score.min == 9 and score.max == 17


def test_na_far_down_a_column_still_leaves_it_numeric(write, build):
    """Past DuckDB's sample of rows, missing values are still nulls, not a reason for text."""
    rows = "".join(f"{i},{i * 2}\n" for i in range(60_000)) + "60000,NA\n60001,\n"
    built = build(write("long.csv", "id,amount\n" + rows))
    assert column_types(built.path, "long")["amount"] == "BIGINT"
    assert query(built.path, "SELECT count(*), count(amount) FROM long") == [(60_002, 60_000)]


def test_dates_decimals_and_booleans_are_sniffed(write, build):
    text = ("day,ordered_at,price,paid,label\n"
            "2024-01-02,2024-01-02 10:30:00,12.50,true,a\n"
            "2024-02-29,2024-02-29 23:59:59,3.25,false,b\n")
    built = build(write("orders.csv", text))
    types = column_types(built.path, "orders")
    assert types["day"] == "DATE" and types["ordered_at"] == "TIMESTAMP"
    assert types["paid"] == "BOOLEAN" and types["label"] == "VARCHAR"
    assert types["price"].startswith(("DOUBLE", "DECIMAL"))
    day, at, price, paid = query(built.path, "SELECT day, ordered_at, price, paid FROM orders "
                                             "ORDER BY day LIMIT 1")[0]
    assert day == dt.date(2024, 1, 2) and at == dt.datetime(2024, 1, 2, 10, 30)
    assert decimal.Decimal(str(price)) == decimal.Decimal("12.5") and paid is True


def test_a_value_that_breaks_the_sampled_type_makes_duckdb_sniff_the_whole_file(write, build):
    rows = "".join(f"{i},{i % 7}\n" for i in range(50_000)) + "50000,pending\n"
    built = build(write("codes.csv", "id,code\n" + rows))
    assert column_types(built.path, "codes")["code"] == "VARCHAR"
    assert query(built.path, "SELECT count(*) FROM codes WHERE code = 'pending'") == [(1,)]
    assert built.rows == 50_001  # no row lost to the retry
    # Not a number and not a missing marker: the column stays text, and the import says so.
    (warning,) = built.tables[0].warnings
    assert "code stays text" in warning and "`pending`" in warning


def test_tsv_gzip_and_zstd(write, build, tmp_path):
    tsv = write("people.tsv", "name\tage\nAnn\t31\nBo\tNA\n")
    gz = write("events.csv.gz", gzip.compress(b"kind,n\nclick,3\nview,NA\n"))
    zst = tmp_path / "visits.csv.zst"
    con = duckdb.connect()
    con.execute(f"COPY (SELECT range AS n FROM range(5)) TO '{zst}' (COMPRESSION zstd)")
    con.close()
    built = build(tsv, gz, zst)
    assert column_types(built.path, "people") == {"name": "VARCHAR", "age": "BIGINT"}
    assert query(built.path, "SELECT sum(n) FROM events") == [(3,)]
    assert query(built.path, "SELECT sum(n) FROM visits") == [(10,)]


def test_headers_become_safe_unique_identifiers(write, build):
    built = build(write("Q1 Sales (EUR).csv",
                        "Order ID,Amount ($),order,Straße,2024,Order ID\n1,2,3,4,5,6\n"))
    assert [t.name for t in built.tables] == ["q1_sales_eur"]
    assert list(column_types(built.path, "q1_sales_eur")) == [
        "order_id", "amount", "order_", "strasse", "c_2024", "order_id_1"]


@pytest.mark.parametrize("text, line, fault", [
    ("a,b,c\n1,2,3\n4,5\n6,7,8\n", 3, "line 3 has 2 fields; the header has 3."),
    ("a,b,c\n1,2,3\n4,5,6\n7,8,9\n10,11,12,13\n", 5, "line 5 has 4 fields; the header has 3."),
    # DuckDB's own message stops counting at the second extra field ("Found: 5").
    ("a,b,c,d\n1,2,3,4\n1,2,3,4\n1,2,3,4\n1,2,3,4\n1,2,3,4\n1,2,3,4,5,6,7\n", 7,
     "line 7 has 7 fields; the header has 4."),
    ('a;b;c;d\n1;2;3;4\n1;"2;x";3;4;5\n', 3, "line 3 has 5 fields; the header has 4."),
])
def test_a_ragged_csv_names_its_line(write, build, data_dir, text, line, fault):
    with pytest.raises(MalformedSource) as caught:
        build(write("ragged.csv", text))
    error = caught.value
    assert error.extra["line"] == line and error.extra["source"] == "ragged.csv"
    assert error.detail.startswith(f"ragged.csv, {fault}"), error.detail
    assert "Found:" not in error.detail
    assert not list(data_dir.rglob("*.duckdb*")), "a failed import leaves no file"


def test_the_line_counts_lines_of_the_file_even_after_a_quoted_newline(write, build):
    with pytest.raises(MalformedSource) as caught:
        build(write("notes.csv", 'id,note\n1,"two\nlines"\n2,ok\n3,too,many\n'))
    assert caught.value.extra["line"] == 5


def test_text_that_is_not_utf8_is_read_as_latin1(write, build):
    built = build(write("export.csv", "city,n\nK\xf6ln,1\nM\xfcnchen,2\n".encode("latin-1")))
    assert query(built.path, "SELECT city FROM export ORDER BY n") == [("Köln",), ("München",)]


@pytest.mark.parametrize("content", [b"", b"\n\n  \n"])
def test_an_empty_file_is_refused(write, build, data_dir, content):
    with pytest.raises(EmptySource) as caught:
        build(write("nothing.csv", content))
    assert "nothing.csv" in caught.value.detail
    assert not list(data_dir.rglob("*.duckdb*"))


def test_a_header_without_rows_is_an_empty_table(write, build):
    built = build(write("header.csv", "a,b\n"))
    assert built.tables[0].rows == 0 and len(built.tables[0].columns) == 2


def test_a_safe_name_may_be_another_columns_original_name(write, build):
    built = build(write("clash.csv", "A B,a_b,x\n1,2,3\n"))
    assert list(column_types(built.path, "clash")) == ["a_b", "a_b_2", "x"]
    assert query(built.path, "SELECT a_b, a_b_2 FROM clash") == [(1, 2)]
