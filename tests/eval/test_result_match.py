"""Execution accuracy's scoring rules: BIRD's EX, what is forgiven and what is not."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from sunrise.eval.result_match import (
    ResultSet,
    cells_equal,
    compare_results,
    decimals_of,
    numbers_agree,
)

GOLD = ResultSet.of(["carrier", "flights"], [("UA", 58665), ("B6", 54635), ("EV", 54173)])


def same(gold: ResultSet, rows, *, columns=("a", "b"), ordered=False, tolerance=0.0) -> bool:
    return compare_results(gold, ResultSet.of(list(columns), rows), ordered=ordered,
                           tolerance=tolerance).equal


def test_unordered_results_are_multisets():
    shuffled = [("EV", 54173), ("UA", 58665), ("B6", 54635)]
    assert same(GOLD, shuffled)
    assert not same(GOLD, shuffled, ordered=True)
    assert same(GOLD, list(GOLD.rows), ordered=True)


def test_duplicate_rows_count():
    gold = ResultSet.of(["x"], [(1,), (1,), (2,)])
    assert same(gold, [(1,), (2,), (1,)], columns=["x"])
    assert not same(gold, [(1,), (2,), (2,)], columns=["x"])
    assert not same(gold, [(1,), (2,)], columns=["x"])


def test_column_order_and_names_are_ignored():
    assert same(GOLD, [(58665, "UA"), (54635, "B6"), (54173, "EV")], columns=["n", "code"])
    verdict = compare_results(GOLD, ResultSet.of(["n", "code"], [(58665, "UA"), (54635, "B6"),
                                                                  (54173, "EV")]), ordered=False)
    assert "columns in another order" in verdict.reason


def test_columns_are_matched_jointly_not_one_by_one():
    # Both columns hold the same multiset; only one assignment keeps the rows together.
    gold = ResultSet.of(["a", "b"], [(1, 2), (2, 1), (3, 3)])
    assert same(gold, [(2, 1), (1, 2), (3, 3)])
    assert not same(gold, [(1, 1), (2, 2), (3, 3)])


def test_a_different_number_of_columns_is_wrong_with_the_reason():
    verdict = compare_results(GOLD, ResultSet.of(["carrier"], [("UA",), ("B6",), ("EV",)]),
                              ordered=False)
    assert not verdict.equal and "1 column(s), the gold result 2" in verdict.reason


def test_nulls_equal_only_nulls():
    gold = ResultSet.of(["x", "y"], [(None, 1), ("a", None)])
    assert same(gold, [("a", None), (None, 1)])
    assert not same(gold, [("a", 0), (None, 1)])
    assert not same(gold, [("", None), (None, 1)])
    assert cells_equal(None, None) and not cells_equal(None, 0) and not cells_equal(0, None)


@pytest.mark.parametrize(("gold", "other", "agree"), [
    (12.639070257, 12.64, True),     # the answer rounded to 2 decimals
    (12.64, 12.639070257, True),
    (12.639070257, 12.6, False),     # one decimal is coarser than the 2 always compared
    (12.639070257, 13, False),
    (336776, 336776.0, True),
    (336776, 336777, False),
    (0.1742, 17.42, False),          # a share and a percentage are different numbers
    (1e-9, 2e-9, False),             # both precise to 9 decimals, and different there
    (0.30000000000000004, 0.3, True),
])
def test_numbers_agree_at_the_coarser_precision(gold, other, agree):
    assert numbers_agree(gold, other) is agree


def test_tolerance_is_relative():
    assert numbers_agree(1000.0, 1009.0, 0.01) and not numbers_agree(1000.0, 1011.0, 0.01)
    assert same(GOLD, [("UA", 58700), ("B6", 54635), ("EV", 54173)], tolerance=0.001)
    assert not same(GOLD, [("UA", 58700), ("B6", 54635), ("EV", 54173)])


def test_cells_are_normalised():
    gold = ResultSet.of(["d", "n", "t"], [(dt.date(2013, 11, 27), Decimal("1014.50"), "x")])
    assert same(gold, [("2013-11-27", 1014.5, "x")], columns=["d", "n", "t"])
    assert not cells_equal("UA", "ua") and not cells_equal(True, 1)


def test_the_first_differing_rows_are_reported():
    verdict = compare_results(GOLD, ResultSet.of(["c", "n"], [("UA", 58665), ("B6", 54636),
                                                              ("EV", 54173)]), ordered=True)
    assert not verdict.equal
    assert (verdict.row_index, verdict.gold_row, verdict.sunrise_row) == (
        1, ("B6", 54635), ("B6", 54636))
    fewer = compare_results(GOLD, ResultSet.of(["c", "n"], [("UA", 58665)]), ordered=True)
    assert "1 row(s), the gold result 3" in fewer.reason
    assert (fewer.row_index, fewer.sunrise_row) == (1, None)


def test_values_within_tolerance_that_sort_differently_still_pair_up():
    gold = ResultSet.of(["k", "v"], [("a", 1.000), ("b", 1.004)])
    assert same(gold, [("a", 1.005), ("b", 1.001)], tolerance=0.01)


def test_decimals_of():
    assert [decimals_of(v) for v in (3, 3.0, 12.64, 1e-7, 0.1 + 0.2)] == [0, 0, 2, 7, 17]


def test_empty_results():
    assert same(ResultSet.of(["x"], []), [], columns=["x"])
    assert not same(ResultSet.of(["x"], []), [(1,)], columns=["x"])
