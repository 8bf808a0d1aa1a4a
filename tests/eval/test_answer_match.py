"""Answer accuracy: the gold values are found in the answer text or its charts."""
from __future__ import annotations

from sunrise.eval.answer_match import gold_values, match_answer


def test_numbers_are_found_as_people_write_them():
    values = [58665, 0.1742, 12.639070257]
    for text in ("UA flew 58,665 flights (17.4%), delayed 12.64 minutes on average.",
                 "UA flew 58.7k flights, 17% of all; the mean delay was 12.6 minutes."):
        assert match_answer(values, text, []).correct, text
    result = match_answer(values, "UA flew 59,251 flights (17.4%), 12.6 minutes late.", [])
    assert (result.found, result.total, result.missing) == (2, 3, [58665])


def test_text_values_are_whole_words_case_insensitive():
    assert match_answer(["UA"], "Carrier ua flew most.", []).correct
    assert not match_answer(["UA"], "USUAL traffic.", []).correct
    assert match_answer(["United Air Lines Inc."], "united air lines inc. leads", []).correct


def test_dates_in_any_common_form():
    for text in ("on 2013-11-27", "on November 27", "on Nov 27, 2013", "on 27 November",
                 "on 11/27/2013", "on the 27th of November"):
        assert match_answer(["2013-11-27"], text, []).correct, text
    assert not match_answer(["2013-11-27"], "on November 28", []).correct


def test_values_in_a_chart_count():
    charts = [{"data": [{"carrier": "UA", "flights": 58665}, {"carrier": "OO", "flights": 32}]}]
    assert match_answer(["OO", 32, "UA", 58665], "See the chart.", charts).correct
    assert not match_answer(["HA"], "See the chart.", charts).correct


def test_gold_values_are_distinct_and_skip_nulls():
    assert gold_values([("UA", 1), ("UA", None), ("B6", 1)]) == ["UA", 1, "B6"]
    assert gold_values([]) == [] and not match_answer([], "anything", []).correct
