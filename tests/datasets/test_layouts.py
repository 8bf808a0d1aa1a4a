"""Files laid out for people: a sheet's header below its title rows, totals rows left out,
and a person's own layout (header row, footer rows) for a CSV or a sheet the inference
gets wrong. Workbooks written by openpyxl, CSVs by pandas, imported by the real engine."""
from __future__ import annotations

import datetime as dt

import openpyxl
import pandas as pd
import pytest

from shared.errors import MalformedSource
from tests.datasets.conftest import column_types, query


def _report_workbook(path, *, totals_label="Total"):
    """A sheet as people make it: a merged title, a note, a blank row, the header on row
    5, three rows of data and a totals row of formulas (openpyxl caches no values)."""
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Sales"
    sheet["B2"] = "Quarterly sales report"
    sheet.merge_cells("B2:G2")  # wider than the table
    sheet["B3"] = "Region: all"
    sheet["G3"] = "EUR"  # a note over a column the table does not have
    sheet.append([])
    sheet.append([None, "Region", "Month", "Revenue", "Units"])
    for region, serial, revenue, units in [("North", 45292, 100.5, 3),
                                           ("South", 45323, 200.25, 4),
                                           ("East", 45352, 50, 1)]:
        sheet.append([None, region, serial, revenue, units])
        sheet.cell(sheet.max_row, 3).number_format = "dd.mm.yyyy"  # an Excel serial, shown as a date
    sheet.append([None, totals_label, None, "=SUM(D6:D8)", "=SUM(E6:E8)"])
    workbook.save(path)
    return path


def test_a_sheet_laid_out_for_people_keeps_its_table_only(tmp_path, build):
    built = build(_report_workbook(tmp_path / "report.xlsx"))
    assert column_types(built.path, "report") == {
        "region": "VARCHAR", "month": "DATE", "revenue": "DOUBLE", "units": "BIGINT"}
    assert query(built.path, "SELECT region, month, revenue, units FROM report ORDER BY month") == [
        ("North", dt.date(2024, 1, 1), 100.5, 3), ("South", dt.date(2024, 2, 1), 200.25, 4),
        ("East", dt.date(2024, 3, 1), 50.0, 1)]
    (table,) = built.tables
    assert "Header on row 5; 2 rows above it left out (row 2: Quarterly sales report)." in table.note
    assert "1 totals row left out (row 9: Total)." in table.note


@pytest.mark.parametrize("label", ["Gesamt", "Grand total", "Summe:", "Total général", "TOTALS"])
def test_totals_rows_are_known_by_their_label_in_several_languages(tmp_path, build, label):
    built = build(_report_workbook(tmp_path / "report.xlsx", totals_label=label))
    assert query(built.path, "SELECT count(*), sum(units) FROM report") == [(3, 8)]


def test_a_row_of_the_column_sums_is_a_totals_row_without_a_label(tmp_path, build):
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["store", "q1", "q2"])
    for row in [["A", 10, 1.5], ["B", 20, 2.5], ["C", 30, 3.0], ["D", 40, 4.0]]:
        sheet.append(row)
    sheet.append([None, 100, 11.0])
    workbook.save(tmp_path / "stores.xlsx")
    built = build(tmp_path / "stores.xlsx")
    assert query(built.path, "SELECT count(*), sum(q1), sum(q2) FROM stores") == [(4, 100, 11.0)]
    assert built.tables[0].note == "1 totals row left out (row 6)."


def test_a_plain_sheet_keeps_every_row(tmp_path, build):
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["n", "square"])
    for n in (1, 2, 3, 6):  # 6 is the sum of the n above it, but square is not
        sheet.append([n, n * n])
    workbook.save(tmp_path / "squares.xlsx")
    built = build(tmp_path / "squares.xlsx")
    assert query(built.path, "SELECT count(*) FROM squares") == [(4,)]
    assert built.tables[0].note is None


def test_a_persons_layout_for_a_sheet_wins_over_the_inference(tmp_path, build):
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["Prepared by", "Finance", "Checked"])  # looks like a header, is not
    sheet.append(["id", "amount", "currency"])
    sheet.append([1, 10, "EUR"])
    sheet.append([2, 20, "USD"])
    sheet.append(["Source: ledger export", None, None])
    workbook.save(tmp_path / "ledger.xlsx")
    built = build(tmp_path / "ledger.xlsx",
                  layouts={"ledger": {"header_row": 2, "skip_footer": 1}})
    assert column_types(built.path, "ledger") == {
        "id": "BIGINT", "amount": "BIGINT", "currency": "VARCHAR"}
    assert query(built.path, "SELECT sum(amount) FROM ledger") == [(30,)]
    assert "1 row at the end left out (row 5: Source: ledger export)." in built.tables[0].note


def test_a_header_row_that_holds_nothing_is_refused(tmp_path, build):
    built_path = _report_workbook(tmp_path / "report.xlsx")
    with pytest.raises(MalformedSource, match=r"report\.xlsx, sheet Sales: .*row 4 holds no cells"):
        build(built_path, layouts={"report": {"header_row": 4}})


def test_a_persons_layout_for_a_csv_moves_the_header_and_drops_the_footer(tmp_path, build):
    frame = pd.DataFrame({"kunde": ["Müller", "Schmidt"], "umsatz": [8102.58, 17.5]})
    path = tmp_path / "export.csv"
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write("Umsatzbericht 2024\nErstellt am 01.02.2024\n\n")
        frame.to_csv(handle, sep=";", index=False)
        handle.write("Summe;8120.08\nEnde des Berichts\n")
    built = build(path, layouts={"export": {"header_row": 4, "skip_footer": 2}})
    assert column_types(built.path, "export") == {"kunde": "VARCHAR", "umsatz": "DOUBLE"}
    assert query(built.path, "SELECT kunde, umsatz FROM export ORDER BY kunde") == [
        ("Müller", 8102.58), ("Schmidt", 17.5)]
    assert built.tables[0].note == ("Header on line 4, as set for this table; 3 lines above it "
                                    "left out. 2 lines at the end left out, as set for this table.")


def test_a_csv_footer_is_counted_from_the_last_non_blank_line(tmp_path, build):
    path = tmp_path / "tail.csv"
    pd.DataFrame({"a": [1, 2, 3]}).to_csv(path, index=False)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("TOTAL 6\n\n\n")
    built = build(path, layouts={"tail": {"skip_footer": 1}})
    assert query(built.path, "SELECT count(*), sum(a) FROM tail") == [(3, 6)]
    assert column_types(built.path, "tail") == {"a": "BIGINT"}
