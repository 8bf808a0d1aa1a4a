"""The corpus's structured files: nested JSON and NDJSON from APIs, and SQLite databases
whose columns have no declared type (ISO dates and numbers stored as text)."""
from __future__ import annotations

import json
import sqlite3

from bench.messy_corpus.build import Case, case, us

ROWS = 60
COUNTRIES = ("DE", "FR", "US", "GB", "ES")


@case("orders_nested.json")
def orders_nested(kase: Case) -> None:
    """An API's array of orders: a nested customer object and a list of line items."""
    placed = [kase.moment() for _ in range(ROWS)]
    total = [kase.money(5, 2_000) for _ in range(ROWS)]
    records = [{"order_id": 5000 + i, "placed_at": p.isoformat(),
                "user": {"name": f"user{i % 13}", "country": kase.pick(COUNTRIES)},
                "items": [{"sku": f"S{kase.rng.randrange(100)}", "qty": kase.rng.randrange(1, 5)}
                          for _ in range(kase.rng.randrange(1, 4))],
                "total": t} for i, (p, t) in enumerate(zip(placed, total))]
    kase.path.write_text(json.dumps(records, indent=2))
    kase.record("orders_nested", "order_id", [r["order_id"] for r in records])
    kase.record("orders_nested", "placed_at", placed)
    kase.record("orders_nested", "total", total)


@case("customers_nested.json")
def customers_nested(kase: Case) -> None:
    """Two levels of nesting: an address holding a geo point."""
    lat = [round(kase.rng.uniform(-60, 70), 5) for _ in range(ROWS)]
    lon = [round(kase.rng.uniform(-170, 170), 5) for _ in range(ROWS)]
    records = [{"id": i + 1, "name": f"Customer {i}",
                "address": {"city": f"City {i % 9}", "country": kase.pick(COUNTRIES),
                            "geo": {"lat": a, "lon": o}}}
               for i, (a, o) in enumerate(zip(lat, lon))]
    kase.path.write_text(json.dumps(records))
    kase.record("customers_nested", "address_geo_lat", lat)
    kase.record("customers_nested", "address_geo_lon", lon)


@case("events.ndjson")
def events(kase: Case) -> None:
    """NDJSON events: a nested device object, amounts sent as formatted strings."""
    at = [kase.moment() for _ in range(ROWS)]
    amount = [kase.money(0, 5_000) for _ in range(ROWS)]
    lines = [json.dumps({"event": kase.pick(("view", "click", "buy")),
                         "at": f"{t:%Y-%m-%d %H:%M:%S}",
                         "device": {"os": kase.pick(("iOS", "Android", "Windows")),
                                    "model": f"model {i % 5}"},
                         "amount": us(a)})
             for i, (t, a) in enumerate(zip(at, amount))]
    kase.path.write_text("\n".join(lines) + "\n")
    kase.record("events", "at_", at)
    kase.record("events", "amount", amount)


@case("shop.sqlite")
def shop(kase: Case) -> None:
    """A hobby shop's SQLite file: columns without declared types, dates as ISO text,
    prices and quantities stored as text."""
    con = sqlite3.connect(kase.path)
    try:
        con.execute("CREATE TABLE orders (id, customer_id, ordered_on, price, quantity)")
        con.execute("CREATE TABLE customers (id, name, signed_up_at, postcode)")
        ordered = [kase.day() for _ in range(ROWS)]
        price = [kase.money(1, 400) for _ in range(ROWS)]
        quantity = [kase.rng.randrange(1, 20) for _ in range(ROWS)]
        con.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?)",
                        [(i + 1, i % 20 + 1, o.isoformat(), f"{p:.2f}", str(q))
                         for i, (o, p, q) in enumerate(zip(ordered, price, quantity))])
        signed = [kase.moment() for _ in range(20)]
        con.executemany("INSERT INTO customers VALUES (?, ?, ?, ?)",
                        [(i + 1, f"Customer {i}", s.isoformat(sep=" "),
                          f"{kase.rng.randrange(1000, 99_999):05d}")
                         for i, s in enumerate(signed)])
        con.commit()
    finally:
        con.close()
    kase.record("orders", "id", range(1, ROWS + 1))
    kase.record("orders", "ordered_on", ordered)
    kase.record("orders", "price", price)
    kase.record("orders", "quantity", quantity)
    kase.record("customers", "signed_up_at", signed)


@case("crm.db")
def crm(kase: Case) -> None:
    """A CRM's SQLite file with TEXT columns holding dollars, ``N/A`` and ISO dates."""
    con = sqlite3.connect(kase.path)
    try:
        con.execute("CREATE TABLE deals (deal_id INTEGER PRIMARY KEY, account TEXT, "
                    "value TEXT, closed TEXT, probability TEXT)")
        value = [None if i % 9 == 0 else kase.money(100, 250_000) for i in range(ROWS)]
        closed = [None if i % 7 == 0 else kase.day() for i in range(ROWS)]
        chance = [round(kase.rng.uniform(0, 1), 2) for _ in range(ROWS)]
        con.executemany("INSERT INTO deals VALUES (?, ?, ?, ?, ?)",
                        [(i + 1, f"Account {i % 11}", "N/A" if v is None else f"${us(v)}",
                          "" if c is None else c.isoformat(), f"{p:.2f}")
                         for i, (v, c, p) in enumerate(zip(value, closed, chance))])
        con.commit()
    finally:
        con.close()
    kase.record("deals", "deal_id", range(1, ROWS + 1))
    kase.record("deals", "value", value)
    kase.record("deals", "closed", closed)
    kase.record("deals", "probability", chance)
