"""The faithfulness check: figures matched against what the tool results showed."""
from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from engine.sql.query_result import ColumnSummary
from engine.sql.result_text import format_result
from worker.answer.number_check import Evidence, check_numbers, evidence_from

CARRIERS = format_result(
    1, ["carrier", "flights", "avg_delay", "on_time_share"],
    [("UA", 58665, 12.1063, 0.6152), ("B6", 54635, 12.9671, 0.5832),
     ("9E", 18460, -9.5012, 0.7001)], 3, None)
BIG = format_result(
    2, ["day", "flights", "first_departure"],
    [("2013-01-01", 842, "2013-01-01 05:17:00")] * 25, 365,
    [ColumnSummary("flights", 365, 336776, 674, 1004, 922.6740)])


def unsupported(text: str, *tool_texts: str, context: tuple[str, ...] = ()) -> list[str]:
    result = check_numbers(text, evidence_from(tool_texts or (CARRIERS,), context))
    return [u["text"] for u in result["unsupported"]]


@pytest.mark.parametrize("text", [
    "UA flew 58,665 flights.", "UA flew 58665 flights.", "UA flew 58.7k flights.",
    "UA flew 59k flights.", "UA flew about 59,000 flights.", "UA flew nearly 60,000 flights.",
    "UA flew over 50,000 flights.", "UA flew 59,000 flights.",
    "UA's mean delay was 12.1 minutes.", "UA's mean delay was 12.11 minutes.",
    "UA's mean delay was 12 minutes.", "UA's mean delay was about 12 minutes.",
    "61.5% of UA flights were on time.", "62% of UA flights were on time.",
    "9E arrived 9.5 minutes early.", "9E's delay was -9.5 minutes.", "9E's delay was −9.50.",
    "All 3 carriers are listed.",
])
def test_rounding_a_person_would_do_is_supported(text):
    assert unsupported(text) == []


@pytest.mark.parametrize(("text", "bad"), [
    ("UA flew 58,666 flights.", "58,666"),
    ("UA flew 59,251 flights.", "59,251"),  # +1 %
    ("UA flew 58.8k flights.", "58.8k"),
    ("UA flew 58,000 flights.", "58,000"),  # a round figure that does not round to it
    ("UA's mean delay was 12.2 minutes.", "12.2"),
    ("UA's mean delay was 12.107 minutes.", "12.107"),  # more digits than were shown
    ("63% of UA flights were on time.", "63%"),
    ("UA flew over 60,000 flights.", "60,000"),
    ("9E's delay was 9.5 minutes.", None),  # unsigned: fine either way
    ("UA's delay was -12.1 minutes.", "-12.1"),  # a written minus needs a negative value
    ("UA flew 4 times as many.", "4"),
])
def test_figures_no_result_holds_are_flagged(text, bad):
    assert unsupported(text) == ([] if bad is None else [bad])


def test_positions_point_into_the_answer_text():
    text = "UA flew 58,665 flights ({{chart:0}}), not 61,000 or 7.5%."
    result = check_numbers(text, evidence_from([CARRIERS]))
    assert result["checked"] == 3
    assert result["unsupported"] == [{"text": "61,000", "position": text.index("61,000")},
                                     {"text": "7.5%", "position": text.index("7.5%")}]


def test_summary_figures_counts_and_dates_are_evidence():
    text = ("Over 365 days there were 336,776 flights, 922.67 a day on average, between "
            "674 and 1,004; 25 days are shown. On 2013-01-01 (January 1, 2013) the first "
            "left at 5:17 am.")
    assert unsupported(text, BIG) == []
    assert unsupported("On 2013-01-02 and in 2014 it was 922.7.", BIG) == ["2013-01-02", "2014"]


def test_query_ids_and_chart_tokens_are_not_checked_but_query_id_is_no_evidence():
    text = "Query 1 shows it {{chart:0}}."
    assert check_numbers(text, evidence_from([CARRIERS]))["checked"] == 0
    assert unsupported("There were 2 of them.", BIG) == ["2"]  # query_id=2 is a label


def test_question_history_and_sql_are_context():
    context = ("Which of the top 5 carriers had delays over 45 minutes?",
               "SELECT carrier FROM flights WHERE dep_delay > 45 LIMIT 5")
    text = "Of the top 5 carriers, 3 had delays over 45 minutes."
    assert unsupported(text, context=context) == []
    assert unsupported("Of the top 6 carriers", context=context) == ["6"]


def test_error_results_hold_no_evidence():
    assert unsupported("UA flew 58,665 flights.", "error: Catalog Error: no table 58665") == [
        "58,665"]


def test_cells_with_words_and_times_are_evidence():
    planes = format_result(3, ["model", "built", "dep"], [("737-824", "1999", 1517),
                                                          ("A320-232", "2004", 5)], 2, None)
    assert unsupported("The 737-824 built in 1999 left at 15:17; the other at 0:05.",
                       planes) == []
    assert unsupported("It left at 15:18.", planes) == ["15:18"]
    hours = format_result(4, ["hour", "avg_delay"], [(19, 24.78), (5, 0.69)], 2, None)
    assert unsupported("Departures at 7 pm (19:00) waited 24.8 minutes, at 5 am 0.7.",
                       hours) == []
    assert unsupported("Departures at 8 pm waited longest.", hours) == ["8 pm"]


def test_nothing_to_check():
    assert check_numbers("No numbers here.", Evidence()) == {"checked": 0, "unsupported": []}
    assert check_numbers("", Evidence()) == {"checked": 0, "unsupported": []}


@given(st.floats(min_value=-1e9, max_value=1e9, allow_nan=False).filter(lambda v: abs(v) > 1e-3),
       st.integers(0, 3))
def test_any_value_written_at_any_precision_is_supported(value, decimals):
    shown = format_result(1, ["v"], [(value,)], 1, None)
    written = f"{float(shown.splitlines()[-1]):,.{decimals}f}"
    assert unsupported(f"It was {written} in all.", shown) == []


@given(st.integers(1_000, 10**9), st.floats(0.01, 0.5), st.booleans())
def test_integers_off_by_one_percent_or_more_are_flagged(value, change, up):
    shown = format_result(1, ["n"], [(value,)], 1, None)
    altered = round(value * (1 + change if up else 1 - change))
    assume(altered % 1000)  # a round figure reads as rounded (tested above)
    text = f"There were {altered:,} of them."
    assert unsupported(text, shown) == [f"{altered:,}"]


def test_sql_literals_count_but_column_positions_and_round_digits_do_not():
    evidence = Evidence()
    evidence.add_sql("SELECT carrier, round(avg(dep_delay), 2) AS d, round(sum(x) / 7, 3) "
                     "FROM flights WHERE distance > 1000 GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 5")
    result = check_numbers("5 carriers over 1,000 miles; 7 days; 2 or 3 or 1.", evidence)
    assert [u["text"] for u in result["unsupported"]] == ["2", "3", "1"]


def test_years_the_data_spans_are_supported_only_as_years(tiny_sandbox):
    from worker.answer.data_years import data_years

    years = data_years(tiny_sandbox)
    assert years == {2024}  # sales.sold_on and sold_at span January-February 2024
    evidence = Evidence()
    evidence.add_years(years)
    assert unsupported_of("Sales in 2024 and 2025 reached 2,024.", evidence) == ["2025", "2,024"]


def unsupported_of(text: str, evidence: Evidence) -> list[str]:
    return [u["text"] for u in check_numbers(text, evidence)["unsupported"]]


def test_cells_read_as_csv_reads_them():
    # Quoted cells (a comma or a quote inside) are read by csv; plain lines are split at
    # the commas; words hold no figure, numbers, dates and times in text cells do.
    text = format_result(
        3, ["name", "note", "flights"],
        [("Delta, Inc.", 'said "42" twice', 48110), ("UA", "since 2013-07-04 at 17:05", 58665),
         ("Envoy", "", None)], 3, None)
    evidence = evidence_from([text])
    assert sorted(evidence._values) == sorted(
        [3, 3, 42, 48110, 2013, 7, 4, 1705, 58665])
    assert evidence._dates == {"2013-07-04", "2013-07"}
    assert evidence._times == {"17:05"}
    assert unsupported("Delta, Inc. said 42; UA since 2013-07-04 at 17:05.", text) == []
    assert unsupported("Envoy flew 1,234 flights.", text) == ["1,234"]
