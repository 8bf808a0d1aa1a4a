"""The corpus's delimited text files: exports from German, French, Swiss and US
spreadsheets and business systems, written with pandas and Python's ``csv`` in the
encodings they come in (UTF-8 with and without BOM, Windows-1252, Latin-1, and
UTF-16 with tabs as Excel's "Unicode text")."""
from __future__ import annotations

import csv
import datetime as dt

import pandas as pd

from bench.messy_corpus.build import Case, accounting, case, french, german, swiss, us

ROWS = 80
CITIES = ("Köln", "München", "Düsseldorf", "Zürich", "Besançon", "Malmö", "Łódź", "Ærø")
NAMES = ("Müller GmbH", "Schäfer & Söhne", "Café Olé", "Østergaard A/S", "Nuñez SL",
         "Smith Ltd", "Björk AB", "Dvořák s.r.o.")


def _write(kase: Case, header: list[str], rows: list[list], *, delimiter: str = ",",
           encoding: str = "utf-8") -> None:
    with open(kase.path, "w", newline="", encoding=encoding) as handle:
        writer = csv.writer(handle, delimiter=delimiter)
        writer.writerow(header)
        writer.writerows(rows)


def _or(text_of, value, marker: str = ""):
    return marker if value is None else text_of(value)


@case("umsatz_de.csv")
def umsatz_de(kase: Case) -> None:
    """A German sales export: pandas with ``sep=';', decimal=','``, amounts pre-formatted
    with thousands dots by the system that produced them."""
    n = ROWS
    umsatz = [kase.money(10, 2_500_000) for _ in range(n)]
    rabatt = [round(kase.rng.uniform(0, 0.3), 3) for _ in range(n)]
    datum = [kase.day() for _ in range(n)]
    menge = [kase.rng.randrange(1, 500) for _ in range(n)]
    frame = pd.DataFrame({"Kunde": [kase.pick(NAMES) for _ in range(n)],
                          "Rechnungsdatum": [f"{d:%d.%m.%Y}" for d in datum],
                          "Umsatz": [german(v) for v in umsatz], "Menge": menge,
                          "Rabatt": rabatt})
    frame.to_csv(kase.path, sep=";", decimal=",", index=False)
    for column, values in (("rechnungsdatum", datum), ("umsatz", umsatz), ("menge", menge),
                           ("rabatt", rabatt)):
        kase.record("umsatz_de", column, values)


@case("preise_de.csv")
def preise_de(kase: Case) -> None:
    """Floats written by pandas with ``decimal=','``; missing weights left empty."""
    n = ROWS
    preis = [kase.money(0.5, 900) for _ in range(n)]
    gewicht = kase.sometimes_missing([round(kase.rng.uniform(0.1, 40), 3) for _ in range(n)])
    lager = [kase.rng.randrange(0, 2000) for _ in range(n)]
    frame = pd.DataFrame({"Artikel": [f"Artikel {i}" for i in range(n)], "Preis": preis,
                          "Gewicht kg": gewicht, "Lager": lager})
    frame.to_csv(kase.path, sep=";", decimal=",", index=False)
    for column, values in (("preis", preis), ("gewicht_kg", gewicht), ("lager", lager)):
        kase.record("preise_de", column, values)


@case("us_sales.csv")
def us_sales(kase: Case) -> None:
    """A US accounting export: month-first dates, thousands commas, dollars, accounting
    negatives in parentheses and percents."""
    n = ROWS
    dates = [kase.day() for _ in range(n)]
    units = [kase.rng.choice((kase.rng.randrange(1, 999), kase.rng.randrange(1000, 90_000)))
             for _ in range(n)]
    revenue = [kase.money(5, 60_000) for _ in range(n)]
    adjustment = [kase.money(-5_000, 5_000) for _ in range(n)]
    margin = [round(kase.rng.uniform(-0.2, 0.6), 3) for _ in range(n)]
    rows = [[1000 + i, f"{d:%m/%d/%Y}", kase.pick(NAMES), us(u, 0), f"${us(r)}",
             accounting(a), f"{m * 100:.1f}%"]
            for i, (d, u, r, a, m) in enumerate(zip(dates, units, revenue, adjustment, margin))]
    _write(kase, ["Order ID", "Order Date", "Customer", "Units", "Revenue", "Adjustment",
                  "Margin"], rows)
    for column, values in (("order_id", [r[0] for r in rows]), ("order_date", dates),
                           ("units", units), ("revenue", revenue),
                           ("adjustment", adjustment), ("margin", margin)):
        kase.record("us_sales", column, values)


@case("eu_currency.csv")
def eu_currency(kase: Case) -> None:
    """Euro amounts with the sign before (``€1.056,13``) and after (``1.056,13 €``)."""
    n = ROWS
    before = [kase.money(1, 99_000) for _ in range(n)]
    after = [kase.money(1, 99_000) for _ in range(n)]
    rows = [[f"Produkt {i}", f"€{german(b)}", f"{german(a)} €", "EUR"]
            for i, (b, a) in enumerate(zip(before, after))]
    _write(kase, ["Produkt", "Listenpreis", "Nettopreis", "Währung"], rows, delimiter=";")
    kase.record("eu_currency", "listenpreis", before)
    kase.record("eu_currency", "nettopreis", after)


@case("fr_export.csv")
def fr_export(kase: Case) -> None:
    """A French export: spaces between thousands (plain and no-break), decimal commas,
    day-first dates."""
    n = ROWS
    population = [kase.rng.randrange(800, 3_000_000) for _ in range(n)]
    surface = [round(kase.rng.uniform(1, 900), 1) for _ in range(n)]
    budget = [kase.money(10_000, 90_000_000) for _ in range(n)]
    dates = [kase.day() for _ in range(n)]
    rows = [[f"Ville {i}", french(p, 0), french(s, 1), french(b, 2, "\u00a0"), f"{d:%d/%m/%Y}"]
            for i, (p, s, b, d) in enumerate(zip(population, surface, budget, dates))]
    _write(kase, ["Ville", "Population", "Surface km2", "Budget", "Date du vote"], rows,
           delimiter=";")
    for column, values in (("population", population), ("surface_km2", surface),
                           ("budget", budget), ("date_du_vote", dates)):
        kase.record("fr_export", column, values)


@case("ch_export.csv")
def ch_export(kase: Case) -> None:
    """Swiss numbers: apostrophes between thousands; dates with dots."""
    n = ROWS
    preis = [kase.money(1, 50_000) for _ in range(n)]
    menge = [kase.rng.randrange(1000, 900_000) for _ in range(n)]
    dates = [kase.day() for _ in range(n)]
    rows = [[f"Art-{i}", swiss(p), swiss(m, 0), f"{d:%d.%m.%Y}"]
            for i, (p, m, d) in enumerate(zip(preis, menge, dates))]
    _write(kase, ["Artikel", "Preis CHF", "Menge", "Datum"], rows)
    for column, values in (("preis_chf", preis), ("menge", menge), ("datum", dates)):
        kase.record("ch_export", column, values)


@case("social_reach.csv")
def social_reach(kase: Case) -> None:
    """``k`` and ``M`` suffixes used by a whole column."""
    n = 40
    followers = [kase.rng.choice((round(kase.rng.uniform(1, 999), 1) * 1_000,
                                  round(kase.rng.uniform(1, 9), 1) * 1_000_000))
                 for _ in range(n)]
    views = [round(kase.rng.uniform(1, 999), 1) * 1_000 for _ in range(n)]

    def short(v: float) -> str:
        return f"{v / 1e6:g}M" if v >= 1e6 else f"{v / 1e3:g}k"

    rows = [[f"channel_{i}", short(f), short(v)] for i, (f, v) in enumerate(zip(followers, views))]
    _write(kase, ["Channel", "Followers", "Views"], rows)
    kase.record("social_reach", "followers", followers)
    kase.record("social_reach", "views", views)


@case("messwerte_de.csv")
def messwerte_de(kase: Case) -> None:
    """Small decimals with a comma (``0,118``) that no thousands reading fits."""
    n = ROWS
    anteil = [round(kase.rng.uniform(0, 0.999), 3) for _ in range(n)]
    wert = [round(kase.rng.uniform(0, 99), 1) for _ in range(n)]
    rows = [[f"MP{i:03d}", german(a, 3), german(w, 1)] for i, (a, w) in enumerate(zip(anteil, wert))]
    _write(kase, ["Messpunkt", "Anteil", "Wert"], rows, delimiter=";")
    kase.record("messwerte_de", "anteil", anteil)
    kase.record("messwerte_de", "wert", wert)


@case("stock_us.csv")
def stock_us(kase: Case) -> None:
    """``1,234`` alone could be a thousand or 1.234; the dollar column beside it says
    the file writes commas between thousands."""
    n = ROWS
    units = [kase.rng.randrange(1000, 99_999) for _ in range(n)]
    value = [kase.money(1000, 99_000) for _ in range(n)]
    rows = [[f"SKU-{i:04d}", us(u, 0), f"${us(v)}"] for i, (u, v) in enumerate(zip(units, value))]
    _write(kase, ["SKU", "Units", "Stock value"], rows)
    kase.record("stock_us", "units", units)
    kase.record("stock_us", "stock_value", value)


@case("lager_de.csv")
def lager_de(kase: Case) -> None:
    """``1.234`` alone could be 1.234; the amounts beside it (``8.102,58``) say dots are
    thousands here."""
    n = ROWS
    stueck = [kase.rng.randrange(1000, 99_999) for _ in range(n)]
    betrag = [kase.money(1000, 99_000) for _ in range(n)]
    rows = [[f"Teil {i}", german(s, 0), german(b)] for i, (s, b) in enumerate(zip(stueck, betrag))]
    _write(kase, ["Teil", "Stück", "Betrag"], rows, delimiter=";")
    kase.record("lager_de", "stuck", stueck)
    kase.record("lager_de", "betrag", betrag)


@case("ambiguous_counts.csv")
def ambiguous_counts(kase: Case) -> None:
    """Only ``1,234``-shaped numbers and nothing else to decide by: ambiguous."""
    n = 40
    amount = [kase.rng.randrange(1000, 9_999) for _ in range(n)]
    rows = [[f"item {i}", us(a, 0)] for i, a in enumerate(amount)]
    _write(kase, ["Item", "Amount"], rows)
    kase.record("ambiguous_counts", "amount", amount)


@case("missing_numbers.csv")
def missing_numbers(kase: Case) -> None:
    """Every missing marker of issue 33, in a decimal and a whole-number column."""
    n = 96
    score = [None if i % 6 == 0 else round(kase.rng.uniform(0, 100), 2) for i in range(n)]
    visits = [None if i % 6 == 3 else kase.rng.randrange(0, 5000) for i in range(n)]
    rows = [[i + 1, _or(str, s, kase.marker(i // 6)), _or(str, v, kase.marker(i // 6 + 5)),
             f"row {i}"] for i, (s, v) in enumerate(zip(score, visits))]
    _write(kase, ["id", "score", "visits", "label"], rows)
    kase.record("missing_numbers", "id", range(1, n + 1))
    kase.record("missing_numbers", "score", score)
    kase.record("missing_numbers", "visits", visits)


@case("missing_dates.csv")
def missing_dates(kase: Case) -> None:
    """Missing markers among ISO and day-first dates."""
    n = 96
    due = [None if i % 8 == 0 else kase.day() for i in range(n)]
    shipped = [None if i % 8 == 4 else kase.day() for i in range(n)]
    rows = [[i + 1, _or(dt.date.isoformat, d, kase.marker(i // 8)),
             _or(lambda v: f"{v:%d/%m/%Y}", s, kase.marker(i // 8 + 3))]
            for i, (d, s) in enumerate(zip(due, shipped))]
    _write(kase, ["id", "due", "shipped"], rows)
    kase.record("missing_dates", "due", due)
    kase.record("missing_dates", "shipped", shipped)


@case("pandas_na.csv")
def pandas_na(kase: Case) -> None:
    """pandas' own way: ``to_csv(na_rep='N/A')`` over floats, nullable integers and dates."""
    n = ROWS
    price = kase.sometimes_missing([kase.money(1, 500) for _ in range(n)])
    qty = kase.sometimes_missing([kase.rng.randrange(1, 90) for _ in range(n)])
    when = kase.sometimes_missing([kase.day() for _ in range(n)])
    frame = pd.DataFrame({"product": [f"p{i}" for i in range(n)], "price": price,
                          "qty": pd.array(qty, dtype="Int64"),
                          "sold_on": pd.to_datetime(pd.Series(when))})
    frame.to_csv(kase.path, index=False, na_rep="N/A")
    for column, values in (("price", price), ("qty", qty), ("sold_on", when)):
        kase.record("pandas_na", column, values)


@case("dates_month_names.csv")
def dates_month_names(kase: Case) -> None:
    """Dates with month names: ``Jan 1 2000``, ``01-Jan-2000``, ``Jan 01, 2000``."""
    n = ROWS
    starts, ends, booked = ([kase.day() for _ in range(n)] for _ in range(3))
    rows = [[f"event {i}", f"{s:%b} {s.day} {s.year}", f"{e:%d-%b-%Y}", f"{b:%b %d, %Y}"]
            for i, (s, e, b) in enumerate(zip(starts, ends, booked))]
    _write(kase, ["Event", "Starts", "Ends", "Booked"], rows)
    for column, values in (("starts", starts), ("ends", ends), ("booked", booked)):
        kase.record("dates_month_names", column, values)


@case("dates_day_first.csv")
def dates_day_first(kase: Case) -> None:
    """``31/01/2024``: day first, told by the days past 12."""
    n = ROWS
    ordered = [kase.day() for _ in range(n)]
    amount = [kase.money(1, 900) for _ in range(n)]
    rows = [[f"{d:%d/%m/%Y}", f"{a:.2f}"] for d, a in zip(ordered, amount)]
    _write(kase, ["Order date", "Amount"], rows)
    kase.record("dates_day_first", "order_date", ordered)
    kase.record("dates_day_first", "amount", amount)


@case("dates_month_first.csv")
def dates_month_first(kase: Case) -> None:
    """``01/31/2024`` and Excel's unpadded ``1/31/2024``: month first."""
    n = ROWS
    padded = [kase.day() for _ in range(n)]
    bare = [kase.day() for _ in range(n)]
    rows = [[f"{p:%m/%d/%Y}", f"{b.month}/{b.day}/{b.year}"] for p, b in zip(padded, bare)]
    _write(kase, ["Invoice date", "Paid on"], rows)
    kase.record("dates_month_first", "invoice_date", padded)
    kase.record("dates_month_first", "paid_on", bare)


@case("dates_ambiguous.csv")
def dates_ambiguous(kase: Case) -> None:
    """Every date with both day and month at most 12: no value tells the order."""
    n = 40
    dates = [dt.date(2024, kase.rng.randrange(1, 13), kase.rng.randrange(1, 13)) for _ in range(n)]
    rows = [[i, f"{d:%d/%m/%Y}"] for i, d in enumerate(dates)]
    _write(kase, ["Visit", "Visit date"], rows)
    kase.record("dates_ambiguous", "visit_date", dates)


@case("dates_mixed.csv")
def dates_mixed(kase: Case) -> None:
    """ISO dates and day-first dates in one column (two systems merged)."""
    n = ROWS
    dates = [kase.day() for _ in range(n)]
    rows = [[i, d.isoformat() if i % 2 else f"{d:%d/%m/%Y}"] for i, d in enumerate(dates)]
    _write(kase, ["Ticket", "Opened"], rows)
    kase.record("dates_mixed", "opened", dates)


@case("timestamps.csv")
def timestamps(kase: Case) -> None:
    """Date and time: ISO with a space, and German ``31.01.2024 14:05``."""
    n = ROWS
    created = [kase.moment() for _ in range(n)]
    updated = [kase.moment() for _ in range(n)]
    rows = [[i, f"{c:%Y-%m-%d %H:%M:%S}", f"{u:%d.%m.%Y %H:%M}"]
            for i, (c, u) in enumerate(zip(created, updated))]
    _write(kase, ["id", "created", "updated"], rows)
    kase.record("timestamps", "created", created)
    kase.record("timestamps", "updated", updated)


@case("codes.csv")
def codes(kase: Case) -> None:
    """Identifiers that look like numbers but are not quantities: postal codes and order
    numbers with leading zeros, phone numbers; and a plain year."""
    n = ROWS
    years = [kase.rng.randrange(1990, 2025) for _ in range(n)]
    rows = [[f"C-{i:05d}", f"{kase.rng.randrange(1000, 99_999):05d}",
             f"+49 30 {kase.rng.randrange(1_000_000, 9_999_999)}", f"{i:06d}", y]
            for i, y in enumerate(years)]
    _write(kase, ["Customer", "Postal code", "Phone", "Order number", "Year"], rows)
    kase.record("codes", "year", years)


@case("anteile_de.csv")
def anteile_de(kase: Case) -> None:
    """German percents (``45,3 %``) and euro amounts."""
    n = ROWS
    anteil = [round(kase.rng.uniform(0, 1), 3) for _ in range(n)]
    wachstum = [round(kase.rng.uniform(-0.2, 0.2), 3) for _ in range(n)]
    umsatz = [kase.money(100, 90_000) for _ in range(n)]
    rows = [[f"Region {i}", f"{german(a * 100, 1)} %", f"{german(w * 100, 1)} %",
             f"{german(u)} €"] for i, (a, w, u) in enumerate(zip(anteil, wachstum, umsatz))]
    _write(kase, ["Region", "Anteil", "Wachstum", "Umsatz"], rows, delimiter=";")
    for column, values in (("anteil", anteil), ("wachstum", wachstum), ("umsatz", umsatz)):
        kase.record("anteile_de", column, values)


@case("kunden_cp1252.csv")
def kunden_cp1252(kase: Case) -> None:
    """Excel's "CSV (semicolon)" on German Windows: Windows-1252, euro signs, umlauts."""
    n = ROWS
    umsatz = [kase.money(10, 50_000) for _ in range(n)]
    seit = [kase.day(dt.date(2015, 1, 1), 3000) for _ in range(n)]
    rows = [[kase.pick(NAMES[:3] + NAMES[5:7]), kase.pick(CITIES[:3]), f"{german(u)} €",
             f"{s:%d.%m.%Y}"] for u, s in zip(umsatz, seit)]
    _write(kase, ["Name", "Stadt", "Umsatz", "Kunde seit"], rows, delimiter=";",
           encoding="cp1252")
    kase.record("kunden_cp1252", "umsatz", umsatz)
    kase.record("kunden_cp1252", "kunde_seit", seit)


@case("clients_latin1.csv")
def clients_latin1(kase: Case) -> None:
    """An old French system's Latin-1 export."""
    n = ROWS
    montant = [kase.money(1, 9_000) for _ in range(n)]
    rows = [[f"Hélène {i}", kase.pick(("Besançon", "Orléans", "Nîmes")), f"{m:.2f}"]
            for i, m in enumerate(montant)]
    _write(kase, ["Nom", "Ville", "Montant"], rows, encoding="latin-1")
    kase.record("clients_latin1", "montant", montant)


@case("unicode_text.txt")
def unicode_text(kase: Case) -> None:
    """Excel's "Unicode text": UTF-16 with a BOM, tab-separated, numbers as displayed."""
    n = ROWS
    menge = [kase.rng.randrange(1, 9_000) for _ in range(n)]
    preis = [kase.money(1, 9_000) for _ in range(n)]
    datum = [kase.day() for _ in range(n)]
    rows = [[kase.pick(CITIES), m, german(p), f"{d:%d.%m.%Y}"]
            for m, p, d in zip(menge, preis, datum)]
    _write(kase, ["Ort", "Menge", "Preis", "Datum"], rows, delimiter="\t", encoding="utf-16")
    for column, values in (("menge", menge), ("preis", preis), ("datum", datum)):
        kase.record("unicode_text", column, values)


@case("contacts_utf8_bom.csv")
def contacts_utf8_bom(kase: Case) -> None:
    """Excel's "CSV UTF-8": a BOM before the header."""
    n = ROWS
    spent = [kase.money(1, 20_000) for _ in range(n)]
    since = [kase.day() for _ in range(n)]
    rows = [[kase.pick(NAMES), us(s), f"{d.month}/{d.day}/{d.year}"] for s, d in zip(spent, since)]
    _write(kase, ["Name", "Spent", "Customer since"], rows, encoding="utf-8-sig")
    kase.record("contacts_utf8_bom", "spent", spent)
    kase.record("contacts_utf8_bom", "customer_since", since)


@case("ledger_pipe.txt")
def ledger_pipe(kase: Case) -> None:
    """A mainframe-style pipe-separated ledger with thousands commas and ISO dates."""
    n = ROWS
    debit = [kase.money(0, 250_000) for _ in range(n)]
    posted = [kase.day() for _ in range(n)]
    rows = [[f"{4000 + i}", p.isoformat(), us(d)] for i, (p, d) in enumerate(zip(posted, debit))]
    _write(kase, ["Account", "Posted", "Debit"], rows, delimiter="|")
    kase.record("ledger_pipe", "posted", posted)
    kase.record("ledger_pipe", "debit", debit)


@case("pounds.csv")
def pounds(kase: Case) -> None:
    """Sterling with the minus before the sign (``-£12.00``)."""
    n = ROWS
    amount = [kase.money(-2_000, 9_000) for _ in range(n)]
    rows = [[f"INV{i:04d}", f"-£{us(-a)}" if a < 0 else f"£{us(a)}"] for i, a in enumerate(amount)]
    _write(kase, ["Invoice", "Amount"], rows)
    kase.record("pounds", "amount", amount)
