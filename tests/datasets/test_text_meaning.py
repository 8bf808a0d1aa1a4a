"""Text columns read as a person reads them (issue 33 §1): formatted numbers, missing
markers and dates become numbers, NULLs and dates through the real import engine, on
files written by the tools people use; what was converted is noted, what stays text
is warned about."""
from __future__ import annotations

import csv
import datetime as dt
import decimal
import json
import sqlite3

import openpyxl
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine.datasets.meaning import MARKERS, conversion_sql
from shared.dataset_annotations import Annotations
from tests.datasets.conftest import column_types, query
from worker.datasets.prompt import build_dataset_prompt


def _column(built, table: str, name: str):
    profile = next(t for t in built.tables if t.name == table)
    return next(c for c in profile.columns if c.name == name)


def _warnings(built, table: str) -> tuple[str, ...]:
    return next(t for t in built.tables if t.name == table).warnings


def _write_csv(path, rows, **kwargs):
    with open(path, "w", newline="", encoding=kwargs.pop("encoding", "utf-8")) as handle:
        csv.writer(handle, **kwargs).writerows(rows)
    return path


def test_a_german_export_with_decimal_commas_sums_as_money(tmp_path, build):
    """The failure the issue starts from: "total umsatz per kunde" summed text."""
    frame = pd.DataFrame({"kunde": ["Müller", "Schmidt", "Müller", "Weber"],
                          "umsatz": [8102.58, 1056.13, 250.0, 1234567.5]})
    shown = frame.assign(umsatz=frame["umsatz"].map(
        lambda v: f"{v:,.2f}".replace(",", "_").replace(".", ",").replace("_", ".")))
    path = tmp_path / "umsatz.csv"
    shown.to_csv(path, sep=";", index=False)
    assert "8.102,58" in path.read_text()
    built = build(path)
    assert column_types(built.path, "umsatz")["umsatz"] == "DOUBLE"
    expected = frame.groupby("kunde")["umsatz"].sum().round(2).to_dict()
    got = dict(query(built.path, "SELECT kunde, round(sum(umsatz), 2) FROM umsatz GROUP BY 1"))
    assert got == expected
    umsatz = _column(built, "umsatz", "umsatz")
    assert umsatz.format == "decimal_comma" and umsatz.original == "text like `8.102,58`"
    assert "decimal comma" in umsatz.note


def test_thousands_with_dots_in_a_semicolon_file_are_not_decimals(tmp_path, build):
    """DuckDB alone reads "1.500" as 1.5; the file's decimal commas say it is 1500."""
    frame = pd.DataFrame({"artikel": ["a", "b"], "menge": ["1.500", "2.250"],
                          "preis": [1.5, 1250.75]})
    path = tmp_path / "lager.csv"
    frame.to_csv(path, sep=";", decimal=",", index=False)
    built = build(path)
    assert query(built.path, "SELECT menge, preis FROM lager ORDER BY artikel") == [
        (1500, 1.5), (2250, 1250.75)]
    assert _column(built, "lager", "menge").format == "decimal_comma"


def test_pandas_decimal_comma_output_is_numeric(tmp_path, build):
    frame = pd.DataFrame({"probe": ["a", "b", "c"], "anteil": [0.118, 2.5, 10.0]})
    path = tmp_path / "anteile.csv"
    frame.to_csv(path, sep=";", decimal=",", index=False)
    built = build(path)
    assert column_types(built.path, "anteile")["anteil"] == "DOUBLE"
    assert query(built.path, "SELECT anteil FROM anteile ORDER BY probe") == [(0.118,), (2.5,), (10.0,)]


def test_a_us_business_export(tmp_path, build):
    rows = [["region", "revenue", "refund", "growth", "units", "pipeline", "closed"],
            ["East", "$2,493.24", "(1,234.00)", "45.3%", "2,579", "1.2M", "Jan 1 2000"],
            ["West", "$1,017.87", "$12.00", "-3.5%", "1,234,567", "800k", "Feb 29 2000"],
            ["North", "N/A", "-", "0%", "12", "2.5B", "n/a"]]
    built = build(_write_csv(tmp_path / "sales.csv", rows))
    types = column_types(built.path, "sales")
    assert types == {"region": "VARCHAR", "revenue": "DECIMAL(18,2)", "refund": "DECIMAL(18,2)",
                     "growth": "DOUBLE", "units": "BIGINT", "pipeline": "DOUBLE",
                     "closed": "DATE"}
    got = query(built.path, "SELECT revenue, refund, growth, units, pipeline, closed FROM sales "
                            "ORDER BY region")
    D = decimal.Decimal
    assert got == [(D("2493.24"), D("-1234.00"), 0.453, 2579, 1.2e6, dt.date(2000, 1, 1)),
                   (None, None, 0.0, 12, 2.5e9, None),
                   (D("1017.87"), D("12.00"), -0.035, 1234567, 8e5, dt.date(2000, 2, 29))]
    assert "Amounts in $" in _column(built, "sales", "revenue").note
    growth = _column(built, "sales", "growth")
    assert growth.format == "decimal_point_percent" and "50% is 0.5" in growth.note
    assert _column(built, "sales", "pipeline").format == "decimal_point_scaled"
    assert not _warnings(built, "sales")


def test_euro_amounts_spaces_and_apostrophes(tmp_path, build):
    rows = [["item", "price_de", "price_fr", "price_ch"],
            ["a", "€1.056,13", "1\u202f234,50 €", "CHF 1'234.50"],
            ["b", "1.056,13 €", "12,00 €", "CHF 99.95"]]
    built = build(_write_csv(tmp_path / "prices.csv", rows, delimiter=";"))
    assert query(built.path, "SELECT price_de, price_fr, price_ch FROM prices ORDER BY item") == [
        (decimal.Decimal("1056.13"), decimal.Decimal("1234.50"), decimal.Decimal("1234.50")),
        (decimal.Decimal("1056.13"), decimal.Decimal("12.00"), decimal.Decimal("99.95"))]


@pytest.mark.parametrize("marker", ["N/A", "n/a", "NA", "null", "NULL", "None", "-", "\u2013",
                                    "?", "#N/A", "NaN", "nan", ""])
def test_missing_markers_leave_numbers_and_dates_typed(tmp_path, build, marker):
    rows = [["id", "amount", "day", "label"], ["1", "1,234,567", "31/01/2024", marker],
            ["2", marker, marker, "x"], ["3", "35", "13/02/2024", "y"]]
    built = build(_write_csv(tmp_path / "m.csv", rows))
    types = column_types(built.path, "m")
    assert types["amount"] == "BIGINT" and types["day"] == "DATE"
    assert query(built.path, "SELECT count(amount), sum(amount), count(day) FROM m") == [
        (2, 1234602, 2)]
    assert marker.lower() in MARKERS


def test_a_marker_in_a_text_column_stays_what_it_was(tmp_path, build):
    rows = [["code", "continent"], ["a", "N/A"], ["b", "EU"], ["c", "-"]]
    built = build(_write_csv(tmp_path / "t.csv", rows))
    assert query(built.path, "SELECT continent FROM t ORDER BY code") == [("N/A",), ("EU",), ("-",)]


def test_an_ambiguous_column_stays_text_with_a_warning(tmp_path, build):
    rows = [["id", "amount"], ["1", "1,234"], ["2", "5,678"]]
    built = build(_write_csv(tmp_path / "amb.csv", rows))
    assert column_types(built.path, "amb")["amount"] == "VARCHAR"
    (warning,) = _warnings(built, "amb")
    assert "amount stays text" in warning and "decimal_comma" in warning
    # Offered as the thousands it most likely is: 1,234 as 1234.
    assert _column(built, "amb", "amount").suggestion == {
        "type": "BIGINT", "format": "decimal_point",
        "label": "looks like numbers (decimal point) — treat as number?"}


@pytest.mark.parametrize(("other", "expected"), [("1,234,567.25", 1234.0), ("1.234.567,25", 1.234)])
def test_an_ambiguous_column_is_decided_by_the_files_other_columns(tmp_path, build, other,
                                                                    expected):
    rows = [["id", "amount", "total"], ["1", "1,234", other], ["2", "5,678", other]]
    if other.endswith(",25"):
        rows = [[cell.replace(",", "§").replace(".", ",").replace("§", ".") if i == 1 else cell
                 for i, cell in enumerate(row)] for row in rows]
        rows = [[r[0], r[1].replace(".", ","), r[2]] for r in rows]
    built = build(_write_csv(tmp_path / "dec.csv", rows, delimiter=";"))
    assert query(built.path, "SELECT amount FROM dec ORDER BY id LIMIT 1") == [(expected,)]
    assert not _warnings(built, "dec")


def test_a_stray_word_keeps_a_number_column_text_and_says_so(tmp_path, build):
    rows = [["id", "qty"], *[[str(i), f"{i * 1000:,}"] for i in range(50)], ["50", "lots"]]
    built = build(_write_csv(tmp_path / "q.csv", rows))
    assert column_types(built.path, "q")["qty"] == "VARCHAR"
    (warning,) = _warnings(built, "q")
    assert "qty stays text" in warning and "`lots`" in warning and "1 of 51" in warning
    assert _column(built, "q", "qty").suggestion["type"] == "BIGINT"
    assert _column(built, "q", "qty").suggestion["format"] == "decimal_point"


def test_mixed_currencies_are_not_added_up(tmp_path, build):
    rows = [["id", "price"], ["1", "$5.00"], ["2", "€7.00"]]
    built = build(_write_csv(tmp_path / "cur.csv", rows, delimiter=";"))
    assert column_types(built.path, "cur")["price"] == "VARCHAR"
    assert any("mixes currencies" in w for w in _warnings(built, "cur"))
    assert _column(built, "cur", "price").suggestion is None  # no one type adds them up


def test_codes_with_leading_zeros_stay_text_without_a_warning(tmp_path, build):
    rows = [["id", "zip"], ["1", "01234"], ["2", "00501"], ["3", "n/a"]]
    built = build(_write_csv(tmp_path / "z.csv", rows))
    assert column_types(built.path, "z")["zip"] == "VARCHAR"
    assert not _warnings(built, "z")


def test_dates_are_decided_per_column_from_the_values(tmp_path, build):
    rows = [["id", "day_first", "month_first", "named", "dashed", "mixed", "ambiguous", "clash"],
            ["1", "31/01/2024", "01/31/2024", "01-Jan-2000", "Jan 1 2000", "2024-01-31",
             "01/02/2024", "13/01/2024"],
            ["2", "01/02/2024", "02/01/2024", "15-Mar-2001", "March 15, 2001", "15/03/2024",
             "03/04/2024", "01/13/2024"]]
    built = build(_write_csv(tmp_path / "d.csv", rows))
    types = column_types(built.path, "d")
    assert {k: v for k, v in types.items() if k not in ("id", "ambiguous", "clash")} == dict.fromkeys(
        ["day_first", "month_first", "named", "dashed", "mixed"], "DATE")
    assert query(built.path, "SELECT day_first, month_first, named, dashed, mixed FROM d "
                             "ORDER BY id") == [
        (dt.date(2024, 1, 31), dt.date(2024, 1, 31), dt.date(2000, 1, 1), dt.date(2000, 1, 1),
         dt.date(2024, 1, 31)),
        (dt.date(2024, 2, 1), dt.date(2024, 2, 1), dt.date(2001, 3, 15), dt.date(2001, 3, 15),
         dt.date(2024, 3, 15))]
    assert _column(built, "d", "mixed").format == "%Y-%m-%d | %d/%m/%Y"
    warnings = _warnings(built, "d")
    assert types["clash"] == "VARCHAR" and any("clash stays text" in w for w in warnings)


def test_an_ambiguous_date_column_follows_the_files_other_dates(tmp_path, build):
    rows = [["id", "ordered", "shipped"], ["1", "03/04/2024", "13/04/2024"],
            ["2", "05/06/2024", "07/06/2024"]]
    built = build(_write_csv(tmp_path / "o.csv", rows))
    assert query(built.path, "SELECT ordered FROM o ORDER BY id") == [
        (dt.date(2024, 4, 3),), (dt.date(2024, 6, 5),)]
    alone = build(_write_csv(tmp_path / "a.csv", [["id", "ordered"], ["1", "03/04/2024"]]),
                  version=2)
    assert column_types(alone.path, "a")["ordered"] == "VARCHAR"
    assert any("day first" in w and "month first" in w for w in _warnings(alone, "a"))
    assert _column(alone, "a", "ordered").suggestion == {
        "type": "DATE", "format": "%d/%m/%Y",
        "label": "looks like a date (%d/%m/%Y) — treat as date?"}
    assert _column(built, "o", "ordered").suggestion is None


def test_a_suggested_retype_reads_the_column_and_is_not_offered_again(tmp_path, build):
    rows = [["id", "seen"], ["1", "03/04/2024 10:00"], ["2", "05/06/2024 11:30"], ["3", "soon"],
            *[[str(i), "07/08/2024 12:00"] for i in range(4, 12)]]
    path = _write_csv(tmp_path / "s.csv", rows)
    suggestion = _column(build(path), "s", "seen").suggestion
    assert suggestion["type"] == "TIMESTAMP" and suggestion["format"] == "%d/%m/%Y"
    rows[3][1] = ""
    path = _write_csv(tmp_path / "s.csv", rows)
    retyped = build(path, version=2, retypes={"s": {"seen": {
        "type": suggestion["type"], "format": suggestion["format"]}}})
    assert query(retyped.path, "SELECT seen FROM s ORDER BY id LIMIT 1") == [
        (dt.datetime(2024, 4, 3, 10, 0),)]
    assert _column(retyped, "s", "seen").suggestion is None


def test_date_times_become_timestamps(tmp_path, build):
    rows = [["id", "seen"], ["1", "31/01/2024 14:05"], ["2", "01/02/2024 09:30:15"]]
    built = build(_write_csv(tmp_path / "ts.csv", rows))
    assert query(built.path, "SELECT seen FROM ts ORDER BY id") == [
        (dt.datetime(2024, 1, 31, 14, 5),), (dt.datetime(2024, 2, 1, 9, 30, 15),)]


def test_postal_codes_of_four_and_five_digits_stay_text(tmp_path, build):
    """A shop's SQLite file: none of these 20 postcodes happens to start with a zero, so
    every one reads as a number; as codes they stay what they were, the next one
    (``01067``) included."""
    path = tmp_path / "shop.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE customers (id, postcode, plz_ort, zipped)")
    con.executemany("INSERT INTO customers VALUES (?, ?, ?, ?)",
                    [(i, str(10_000 + 4_321 * i), f"{1000 + i}", str(10_000 + i))
                     for i in range(20)])
    con.commit()
    con.close()
    built = build(path)
    types = column_types(built.path, "customers")
    assert (types["postcode"], types["plz_ort"]) == ("VARCHAR", "VARCHAR")
    assert types["zipped"] == "BIGINT"  # "zip" must be a word of the name
    assert query(built.path, "SELECT postcode FROM customers ORDER BY id LIMIT 1") == [("10000",)]
    postcode = _column(built, "customers", "postcode")
    assert postcode.suggestion is None and "kept as text" in postcode.note
    assert not _warnings(built, "customers")


def test_iso_text_in_an_untyped_sqlite_column_is_a_date(tmp_path, build):
    path = tmp_path / "shop.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE orders (id INTEGER, placed, total TEXT)")
    con.executemany("INSERT INTO orders VALUES (?, ?, ?)",
                    [(1, "2024-01-31", "1,017.87"), (2, "2024-02-29", "NULL")])
    con.commit()
    con.close()
    built = build(path)
    assert column_types(built.path, "orders") == {"id": "BIGINT", "placed": "DATE",
                                                  "total": "DOUBLE"}


def test_text_cells_of_a_workbook_are_read_too(tmp_path, build):
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["kunde", "umsatz", "stand"])
    sheet.append(["A", "€1.056,13", "31.01.2024"])
    sheet.append(["B", 12, "n/a"])
    sheet.append(["C", "#N/A", "01.02.2024"])
    path = tmp_path / "umsatz.xlsx"
    book.save(path)
    built = build(path)
    assert column_types(built.path, "umsatz") == {"kunde": "VARCHAR", "umsatz": "DECIMAL(18,2)",
                                                  "stand": "DATE"}
    assert query(built.path, "SELECT sum(umsatz), max(stand) FROM umsatz") == [
        (decimal.Decimal("1068.13"), dt.date(2024, 2, 1))]


def test_json_string_amounts_are_numbers(tmp_path, build):
    path = tmp_path / "orders.json"
    path.write_text(json.dumps([{"id": 1, "total": "$1,017.87"}, {"id": 2, "total": "n/a"}]))
    built = build(path)
    assert column_types(built.path, "orders")["total"] == "DECIMAL(18,2)"


def test_a_source_that_declares_its_types_keeps_its_text(tmp_path, build):
    path = tmp_path / "typed.parquet"
    pq.write_table(pa.table({"code": ["1,234", "5,678"]}), path)
    built = build(path)
    assert column_types(built.path, "typed")["code"] == "VARCHAR"


def test_the_prompt_says_how_a_column_was_read(tmp_path, build):
    rows = [["region", "growth"], ["East", "45.3%"], ["West", "-3.5%"]]
    built = build(_write_csv(tmp_path / "g.csv", rows))
    prompt = build_dataset_prompt(built.tables, dt.date(2026, 1, 1))
    assert "growth: Numbers read from text like `45.3%`" in prompt and "50% is 0.5" in prompt
    said = build_dataset_prompt(built.tables, dt.date(2026, 1, 1), Annotations.model_validate(
        {"tables": {"g": {"columns": {"growth": "Year on year growth."}}}}))
    assert "Year on year growth." in said and "45.3%" not in said


@pytest.mark.parametrize(("text", "sql_type", "fmt", "expected"), [
    ("1.234,5", "DOUBLE", "decimal_comma", 1234.5),
    ("1,234.5", "DOUBLE", None, 1234.5),
    ("12,5 %", "DOUBLE", "decimal_comma_percent", 0.125),
    ("$1.5k", "DOUBLE", "decimal_point_scaled", 1500.0),
    ("(3.10)", "DECIMAL(12,2)", "decimal_point", decimal.Decimal("-3.10")),
    ("31.01.2024", "DATE", "%d.%m.%Y", dt.date(2024, 1, 31)),
    ("01/31/2024", "DATE", "%m/%d/%Y", dt.date(2024, 1, 31)),
    ("2024-01-31", "DATE", None, dt.date(2024, 1, 31)),
    ("ja", "BOOLEAN", None, True),
    ("N/A", "BIGINT", None, None),
    ("1,23,4", "BIGINT", None, None),
])
def test_conversion_sql_reads_the_formats_vocabulary(text, sql_type, fmt, expected):
    import duckdb
    con = duckdb.connect()
    literal = "'" + text.replace("'", "''") + "'"
    assert con.execute(f"SELECT {conversion_sql(literal, sql_type, fmt)}").fetchone()[0] == expected


def test_conversion_sql_refuses_an_unknown_format():
    with pytest.raises(ValueError, match="decimal_comma"):
        conversion_sql("x", "DOUBLE", "comma")
