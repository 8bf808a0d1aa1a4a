"""The console's suggested questions (api/static/suggestions.js) in real Chromium, on
profiles shaped as the API gives them: identifiers, keys, codes, serials, zips and years
are never added up or averaged (known by name or by their values), and a column that is
mostly null is never grouped by. The module is served from api/static as the console
serves it; no API is needed."""
from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

STATIC = Path(__file__).resolve().parents[2] / "api" / "static"
ORIGIN = "http://console.test"


@pytest.fixture
def suggest(page):
    """suggest(tables) -> the questions suggestQuestions writes for a dataset of them."""
    def serve(route):
        name = route.request.url.removeprefix(f"{ORIGIN}/static/")
        if route.request.url == f"{ORIGIN}/":
            route.fulfill(status=200, content_type="text/html", body="<!doctype html><title>t</title>")
        elif (STATIC / name).is_file() and "/" not in name:
            route.fulfill(status=200, content_type="text/javascript",
                          body=(STATIC / name).read_text())
        else:
            route.fulfill(status=404, body="")

    page.route(f"{ORIGIN}/**", serve)
    page.goto(f"{ORIGIN}/")

    def run(tables: list[dict]) -> list[str]:
        return page.evaluate("async (dataset) => (await import('/static/suggestions.js'))"
                             ".suggestQuestions(dataset)", {"tables": tables})
    return run


def column(name: str, type_: str, **profile) -> dict:
    return {"name": name, "type": type_, "null_fraction": 0.0, "distinct": 40, "min": None,
            "max": None, "top_values": [], **profile}


def test_ids_keys_codes_serials_zips_and_years_are_never_added_up(suggest):
    identifiers = [
        column("customerid", "BIGINT", min=3, max=4000),            # a database's key
        column("invoice_key", "BIGINT", min=10, max=99999),
        column("product_code", "INTEGER", min=100, max=999),
        column("serial", "BIGINT", min=7, max=70000),
        column("zip", "BIGINT", min=1010, max=9990),
        column("built", "INTEGER", min=1950, max=2024),             # years by their values
        column("line", "BIGINT", distinct=40, min=1, max=40),       # 1..40: a serial
    ]
    tables = [{"name": "orders", "rows": 40, "columns": [
        *identifiers, column("region", "VARCHAR", distinct=4),
        column("day", "DATE", min="2024-01-01", max="2024-03-01")]}]
    questions = suggest(tables)
    assert questions == ["How many orders are there per region?"], questions
    for col in identifiers:
        assert not any(col["name"] in q for q in questions)

    with_amount = [{**tables[0], "columns": [*tables[0]["columns"],
                                             column("paid", "DOUBLE", min=1.5, max=980.0)]}]
    assert suggest(with_amount) == [
        "How many orders are there per region?",
        "What is the total paid of orders per month?",
        "What is the average paid per region?"]


def test_a_mostly_null_column_is_never_grouped_by(suggest):
    tables = [{"name": "people", "rows": 100, "columns": [
        column("nickname", "VARCHAR", distinct=5, null_fraction=0.8),
        column("height", "DOUBLE", min=150.0, max=200.0)]}]
    questions = suggest(tables)
    assert not any("nickname" in q for q in questions), questions
    half = [{**tables[0], "columns": [{**tables[0]["columns"][0], "null_fraction": 0.5},
                                      tables[0]["columns"][1]]}]
    assert suggest(half) == ["How many people are there per nickname?",
                             "What is the average height per nickname?"]
