"""Figures in prose: every number format the faithfulness check reads, and what it skips."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from worker.answer.number_parse import find_figures, parse_plain_number


def one(text: str):
    (figure,) = find_figures(text)
    return figure


@pytest.mark.parametrize(("text", "written", "value", "decimals"), [
    ("United flew 58665 flights", "58665", 58665, 0),
    ("United flew 58,665 flights", "58,665", 58665, 0),
    ("United flew 58\u202f665 flights", "58\u202f665", 58665, 0),
    ("United flew 58\u00a0665 flights", "58\u00a0665", 58665, 0),
    ("a mean delay of 12.64 minutes.", "12.64", 12.64, 2),
    ("a share of .5 at most", ".5", 0.5, 1),
    ("1,234,567.891 in all", "1,234,567.891", 1234567.891, 3),
    ("It ends in 336776.", "336776", 336776, 0),
])
def test_plain_numbers(text, written, value, decimals):
    figure = one(text)
    assert (figure.text, figure.value, figure.decimals, figure.kind) == (
        written, pytest.approx(value), decimals, "number")
    assert text[figure.start:figure.end] == written


@pytest.mark.parametrize(("text", "written", "value", "scale", "decimals"), [
    ("about 58.7k flights", "58.7k", 58_700, 1e3, 1),
    ("58.7K flights", "58.7K", 58_700, 1e3, 1),
    ("1.2M passengers", "1.2M", 1_200_000, 1e6, 1),
    ("3bn rows", "3bn", 3e9, 1e9, 0),
    ("1.2 million passengers", "1.2 million", 1_200_000, 1e6, 1),
    ("12 thousand seats", "12 thousand", 12_000, 1e3, 0),
    ("2.5 billion miles", "2.5 billion", 2.5e9, 1e9, 1),
])
def test_scale_suffixes_and_words(text, written, value, scale, decimals):
    figure = one(text)
    assert (figure.text, figure.value, figure.scale, figure.decimals) == (
        written, pytest.approx(value), scale, decimals)


def test_unit_is_the_step_of_the_last_digit_written():
    assert one("12.6").unit() == pytest.approx(0.1)
    assert one("58.7k").unit() == pytest.approx(100)
    assert one("59,000").unit() == 1 and one("59,000").trailing_zeros == 3
    assert one("1.25M").unit() == pytest.approx(10_000)


@pytest.mark.parametrize(("text", "written", "value"), [
    ("12.3% of flights", "12.3%", 12.3),
    ("12.3 % of flights", "12.3 %", 12.3),
    ("12.3 percent of flights", "12.3 percent", 12.3),
    ("12.3 per cent of flights", "12.3 per cent", 12.3),
    ("up 2 percentage points", "2 percentage points", 2),
])
def test_percentages(text, written, value):
    figure = one(text)
    assert figure.percent and figure.text == written and figure.value == pytest.approx(value)


@pytest.mark.parametrize(("text", "written", "value", "currency"), [
    ("cost $1,234.56 in all", "$1,234.56", 1234.56, "$"),
    ("cost $1.2M in all", "$1.2M", 1.2e6, "$"),
    ("cost $2B in all", "$2B", 2e9, "$"),
    ("cost €40 each", "€40", 40, "€"),
    ("cost USD 12 each", "USD 12", 12, "USD"),
    ("a loss of -$5 each", "-$5", -5, "$"),
    ("a loss of $-5 each", "$-5", -5, "$"),
])
def test_currency(text, written, value, currency):
    figure = one(text)
    assert (figure.text, figure.value, figure.currency) == (written, pytest.approx(value),
                                                            currency)


@pytest.mark.parametrize(("text", "value"), [
    ("arrived -9.5 minutes late", -9.5),
    ("arrived \u22129.5 minutes late", -9.5),
    ("(-3 on average)", -3),
])
def test_negative_numbers(text, value):
    assert one(text).value == value


def test_hyphens_are_ranges_or_names_not_signs():
    assert [(f.text, f.value) for f in find_figures("between 10-20 flights")] == [
        ("10", 10), ("20", 20)]
    assert [f.value for f in find_figures("a 737-800 jet")] == [737, 800]
    assert find_figures("since COVID-19 began") == []
    assert [f.value for f in find_figures("from 10\u201320")] == [10, 20]


@pytest.mark.parametrize(("text", "hedge"), [
    ("about 59,000", "about"), ("around 59k", "about"), ("roughly 12", "about"),
    ("~12", "about"), ("approximately 12", "about"), ("over 300,000", "over"),
    ("more than 300,000", "over"), ("at least 5", "over"), ("nearly 13", "under"),
    ("almost 13", "under"), ("fewer than 20", "under"), ("just 13", None), ("13", None),
])
def test_hedges(text, hedge):
    assert one(text).hedge == hedge


@pytest.mark.parametrize(("text", "iso", "kind"), [
    ("on 2013-07-04 most", "2013-07-04", "date"),
    ("at 2013-07-04 17:00:00 most", "2013-07-04", "date"),
    ("in 2013-07 most", "2013-07", "date"),
    ("on 7/4/2013 most", "2013-07-04", "date"),
    ("at 17:05 most", "17:05", "time"),
    ("at 5:05 pm most", "17:05", "time"),
    ("at 12:30 am most", "00:30", "time"),
    ("at 7 pm most", "19:00", "time"),
    ("at 7pm most", "19:00", "time"),
    ("at 12 a.m. most", "00:00", "time"),
])
def test_dates_and_times(text, iso, kind):
    figure = one(text)
    assert (figure.iso, figure.kind) == (iso, kind)


def test_years_are_told_apart_from_other_integers():
    assert one("in 2013 there were").kind == "year"
    assert one("2,013 flights").kind == "number"
    assert one("$2013 spent").kind == "number"
    assert one("2013.5 miles").kind == "number"
    assert one("year 1066").kind == "number"


@pytest.mark.parametrize("text", [
    "See {{chart:0}} and {{ chart : 12 }}.",
    "query 3 found it", "Query #2 found it", "query_id=3", "query id 4", "queries 1 and 2",
    "the chart 2 below", "the #1 carrier", "the 3rd busiest", "the 21st day", "the 2nd",
    "plane N14228", "carrier 9E", "an A320", "version v1.2", "a 12min wait", "5m", "B6",
])
def test_labels_and_identifiers_are_not_figures(text):
    assert find_figures(text) == [], [f.text for f in find_figures(text)]


def test_list_markers_at_line_starts_are_not_figures():
    text = "Top carriers:\n1. UA 58,665\n2) B6 54,635\n  3. EV 54,173\n4 carriers in all."
    assert [f.text for f in find_figures(text)] == ["58,665", "54,635", "54,173", "4"]


def test_multiplier_notation_and_positions_in_a_realistic_answer():
    text = ("United Airlines (UA) flew the most flights: 58,665, or 17.4% of all 336,776 "
            "flights in 2013 {{chart:0}} — about 2x Delta's 48.1k.")
    figures = find_figures(text)
    assert [f.text for f in figures] == ["58,665", "17.4%", "336,776", "2013", "2x", "48.1k"]
    for f in figures:
        assert text[f.start:f.end] == f.text


def test_plain_number_cells():
    assert parse_plain_number("58665") == 58665
    assert parse_plain_number(" -12.5 ") == -12.5
    assert parse_plain_number("1e+20") == 1e20
    assert parse_plain_number("58,665") == 58665
    assert parse_plain_number("-1,234,567.5") == -1234567.5
    for text in ("NaN", "Infinity", "UA", "", "1,2", "12 flights", "\u22121,234", "1,234,56"):
        assert parse_plain_number(text) is None


@given(st.floats(min_value=-1e12, max_value=1e12, allow_nan=False), st.integers(0, 4))
def test_any_formatted_number_reads_back(value, decimals):
    for text in (f"{value:.{decimals}f}", f"{value:,.{decimals}f}"):
        figure = one(f"a total of {text} in all")
        assert figure.text == text.replace("-", "-")
        assert figure.value == pytest.approx(float(text.replace(",", "")))
        assert figure.decimals == decimals
