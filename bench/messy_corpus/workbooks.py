"""The corpus's Excel workbooks, laid out for people: title rows and merged title cells
above the header, blank rows, totals rows summing the columns with formulas (as
openpyxl writes them: no cached value), numbers typed as text, dates as formatted
cells or serial numbers, error cells, several sheets; and one written by pandas."""
from __future__ import annotations

import datetime as dt

import openpyxl
import pandas as pd
from openpyxl.utils import get_column_letter

from bench.messy_corpus.build import Case, case, german, us

ROWS = 40
REGIONS = ("Nord", "Süd", "Ost", "West")
_FIXED = dt.datetime(2024, 4, 2, 9, 0)


def _workbook() -> openpyxl.Workbook:
    book = openpyxl.Workbook()
    # The same content every run; openpyxl stamps only the save time (docProps).
    book.properties.created = _FIXED
    return book


def _title(sheet, title: str, width: int, subtitle: str | None = None) -> int:
    """A merged title cell (and a subtitle), then a blank row; the header's row number."""
    sheet.cell(1, 1, title)
    sheet.merge_cells(start_row=1, start_column=1, end_row=1, end_column=width)
    row = 2
    if subtitle:
        sheet.cell(2, 1, subtitle)
        row = 3
    return row + 1


def _table(sheet, top: int, header: list[str], rows: list[list],
           formats: dict[int, str] | None = None) -> int:
    """Header at row ``top``, rows below, number formats per column; the next free row."""
    for col, name in enumerate(header, 1):
        sheet.cell(top, col, name)
    for r, values in enumerate(rows, top + 1):
        for col, value in enumerate(values, 1):
            cell = sheet.cell(r, col, value)
            if formats and col in formats:
                cell.number_format = formats[col]
    return top + 1 + len(rows)


def _totals(sheet, row: int, label: str | None, first: int, last: int,
            columns: list[int]) -> None:
    if label:
        sheet.cell(row, 1, label)
    for col in columns:
        letter = get_column_letter(col)
        cell = sheet.cell(row, col, f"=SUM({letter}{first}:{letter}{last})")
        cell.number_format = "#,##0.00"


@case("umsatzbericht.xlsx")
def umsatzbericht(kase: Case) -> None:
    """A German report: merged title, subtitle, blank row, header, rows, ``Gesamt``."""
    book = _workbook()
    sheet = book.active
    sheet.title = "Bericht"
    monat = [dt.date(2024, 1 + i % 12, 1) for i in range(ROWS)]
    umsatz = [kase.money(1_000, 90_000) for _ in range(ROWS)]
    kosten = [kase.money(500, 50_000) for _ in range(ROWS)]
    marge = [round(kase.rng.uniform(0, 0.5), 3) for _ in range(ROWS)]
    top = _title(sheet, "Umsatzbericht 2024", 5, "Erstellt am 02.04.2024")
    rows = [[kase.pick(REGIONS), m, u, k, g] for m, u, k, g in zip(monat, umsatz, kosten, marge)]
    end = _table(sheet, top, ["Region", "Monat", "Umsatz", "Kosten", "Marge"], rows,
                 {2: "MMM YYYY", 3: '#,##0.00 "€"', 4: '#,##0.00 "€"', 5: "0.0%"})
    _totals(sheet, end, "Gesamt", top + 1, end - 1, [3, 4])
    book.save(kase.path)
    for column, values in (("monat", monat), ("umsatz", umsatz), ("kosten", kosten),
                           ("marge", marge)):
        kase.record("umsatzbericht", column, values)


@case("sales_report.xlsx")
def sales_report(kase: Case) -> None:
    """A US report: title, blank rows, month-first date cells, a ``Total`` row."""
    book = _workbook()
    sheet = book.active
    dates = [kase.day() for _ in range(ROWS)]
    revenue = [kase.money(100, 80_000) for _ in range(ROWS)]
    units = [kase.rng.randrange(1, 3000) for _ in range(ROWS)]
    top = _title(sheet, "Q1-Q4 Sales by Rep", 4) + 1  # two blank rows under the title
    rows = [[f"Rep {i % 7}", d, u, r] for i, (d, u, r) in enumerate(zip(dates, units, revenue))]
    end = _table(sheet, top, ["Sales Rep", "Close Date", "Units", "Revenue"], rows,
                 {2: "mm/dd/yyyy", 4: '"$"#,##0.00'})
    _totals(sheet, end, "Total", top + 1, end - 1, [3, 4])
    book.save(kase.path)
    for column, values in (("close_date", dates), ("units", units), ("revenue", revenue)):
        kase.record("sales_report", column, values)


@case("finanzen.xlsx")
def finanzen(kase: Case) -> None:
    """Two sheets, each a titled table with a totals row (``Summe``, ``Sum``)."""
    book = _workbook()
    for index, (title, label) in enumerate((("Einnahmen", "Summe"), ("Ausgaben", "Sum"))):
        sheet = book.active if index == 0 else book.create_sheet()
        sheet.title = title
        dates = [kase.day() for _ in range(ROWS)]
        betrag = [kase.money(10, 20_000) for _ in range(ROWS)]
        top = _title(sheet, f"{title} 2024", 3)
        end = _table(sheet, top, ["Datum", "Posten", "Betrag"],
                     [[d, f"Posten {i}", b] for i, (d, b) in enumerate(zip(dates, betrag))],
                     {1: "DD.MM.YYYY", 3: "#,##0.00"})
        _totals(sheet, end, label, top + 1, end - 1, [3])
        table = f"finanzen_{title.lower()}"
        kase.record(table, "datum", dates)
        kase.record(table, "betrag", betrag)
    book.save(kase.path)


@case("text_numbers.xlsx")
def text_numbers(kase: Case) -> None:
    """Numbers and dates typed as text cells (pasted from a system), serial numbers in
    date-formatted cells, and codes with leading zeros."""
    book = _workbook()
    sheet = book.active
    amount = [kase.money(1, 90_000) for _ in range(ROWS)]
    betrag = [kase.money(1, 90_000) for _ in range(ROWS)]
    booked = [kase.day() for _ in range(ROWS)]
    serial = [kase.day() for _ in range(ROWS)]
    epoch = dt.date(1899, 12, 30)
    rows = [[f"{i:05d}", us(a), german(b), f"{d:%d.%m.%Y}", (s - epoch).days]
            for i, (a, b, d, s) in enumerate(zip(amount, betrag, booked, serial))]
    _table(sheet, 1, ["Code", "Amount", "Betrag", "Gebucht", "Valuta"], rows,
           {1: "@", 2: "@", 3: "@", 4: "@", 5: "DD.MM.YYYY"})
    book.save(kase.path)
    for column, values in (("amount", amount), ("betrag", betrag), ("gebucht", booked),
                           ("valuta", serial)):
        kase.record("text_numbers", column, values)


@case("excel_missing.xlsx")
def excel_missing(kase: Case) -> None:
    """Missing values as people type them in a sheet: ``#N/A`` (an error cell), ``-``,
    ``n/a``, ``?``, among numbers and date cells."""
    book = _workbook()
    sheet = book.active
    markers = ("#N/A", "-", "n/a", "?", "N/A", "")
    price = [None if i % 5 == 0 else kase.money(1, 500) for i in range(ROWS)]
    stock = [None if i % 5 == 2 else kase.rng.randrange(0, 900) for i in range(ROWS)]
    due = [None if i % 5 == 4 else kase.day() for i in range(ROWS)]

    def cell(value, i):
        return markers[i // 5 % len(markers)] if value is None else value

    rows = [[f"item {i}", cell(p, i), cell(s, i), cell(d, i)]
            for i, (p, s, d) in enumerate(zip(price, stock, due))]
    _table(sheet, 1, ["Item", "Price", "Stock", "Due"], rows, {4: "yyyy-mm-dd"})
    book.save(kase.path)
    for column, values in (("price", price), ("stock", stock), ("due", due)):
        kase.record("excel_missing", column, values)


@case("pandas_export.xlsx")
def pandas_export(kase: Case) -> None:
    """``DataFrame.to_excel(startrow=2)`` under a title written into the same sheet."""
    n = ROWS
    when = [kase.moment() for _ in range(n)]
    score = kase.sometimes_missing([round(kase.rng.uniform(0, 10), 2) for _ in range(n)])
    count = [kase.rng.randrange(0, 100) for _ in range(n)]
    frame = pd.DataFrame({"Team": [kase.pick(REGIONS) for _ in range(n)], "Recorded at": when,
                          "Score": score, "Count": count})
    with pd.ExcelWriter(kase.path, engine="openpyxl") as writer:
        frame.to_excel(writer, sheet_name="Export", index=False, startrow=2)
        writer.book.properties.created = _FIXED
        writer.sheets["Export"].cell(1, 1, "Weekly scores, exported from the team tracker")
    for column, values in (("recorded_at", when), ("score", score), ("count", count)):
        kase.record("pandas_export", column, values)


@case("budget_formula_totals.xlsx")
def budget_formula_totals(kase: Case) -> None:
    """A blank row, then a totals row with no label: only formulas summing the columns."""
    book = _workbook()
    sheet = book.active
    plan = [kase.money(1_000, 50_000) for _ in range(ROWS)]
    actual = [kase.money(1_000, 50_000) for _ in range(ROWS)]
    end = _table(sheet, 1, ["Cost centre", "Plan", "Actual"],
                 [[f"CC{100 + i}", p, a] for i, (p, a) in enumerate(zip(plan, actual))],
                 {2: "#,##0", 3: "#,##0"})
    _totals(sheet, end + 1, None, 2, end - 1, [2, 3])
    book.save(kase.path)
    kase.record("budget_formula_totals", "plan", plan)
    kase.record("budget_formula_totals", "actual", actual)


@case("expenses_export.xlsx")
def expenses_export(kase: Case) -> None:
    """An accounting tool's export: a title, the header, rows and a ``Total`` row holding
    the sums as values (as a tool writes them, or Excel once it has calculated)."""
    book = _workbook()
    sheet = book.active
    dates = [kase.day() for _ in range(ROWS)]
    net = [kase.money(5, 4_000) for _ in range(ROWS)]
    vat = [round(v * 0.19, 2) for v in net]
    top = _title(sheet, "Expenses January-December", 4)
    end = _table(sheet, top, ["Booked", "Supplier", "Net", "VAT"],
                 [[d, f"Supplier {i % 6}", n, v] for i, (d, n, v) in enumerate(zip(dates, net, vat))],
                 {1: "dd/mm/yyyy", 3: "#,##0.00", 4: "#,##0.00"})
    for col, value in ((1, "Total"), (3, round(sum(net), 2)), (4, round(sum(vat), 2))):
        sheet.cell(end, col, value)
    book.save(kase.path)
    for column, values in (("booked", dates), ("net", net), ("vat", vat)):
        kase.record("expenses_export", column, values)
