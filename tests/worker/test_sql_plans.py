"""A SQL process's plans: a statement sent again runs without being guarded and bound
again, and gives exactly what it gave the first time."""
from __future__ import annotations

import pytest

from engine.sql.plans import StatementPlan, StatementPlans
from engine.sql.result_sql import BoundedQuery
from engine.sql.result_text import result_text


def _plan(sql: str) -> StatementPlan:
    return StatementPlan(sql, ("c",), ("INTEGER",), BoundedQuery(sql, ("as is",)))


@pytest.mark.parametrize("sql", [
    "SELECT region, sum(amount) AS total FROM sales GROUP BY 1 ORDER BY 1",
    "SELECT * FROM sales ORDER BY sale_id",  # more than 25 rows: summarised
    "SELECT k, v FROM small ORDER BY k;  -- trailing comment",
])
def test_a_statement_sent_again_gives_the_same_result(executor, sql):
    first = executor.run(sql, 5.0)
    again = executor.run(sql, 5.0)
    assert len(executor._plans) == 1
    assert not again.is_error
    assert (again.sql, again.columns, again.types, again.rows, again.total_rows,
            again.summary, again.total_columns) == (
        first.sql, first.columns, first.types, first.rows, first.total_rows,
        first.summary, first.total_columns)
    assert result_text(again, 4) == result_text(first, 4)


def test_refusals_and_errors_are_not_kept_and_stay_what_they_were(executor):
    for _ in range(2):
        refused = executor.run("DELETE FROM sales", 5.0)
        assert refused.is_error and "not allowed" in refused.error
        failed = executor.run("SELECT nope FROM sales", 5.0)
        assert failed.is_error and "nope" in failed.error
        assert executor.run(42, 5.0).is_error  # not a string: never a plan
    assert len(executor._plans) == 0


def test_a_kept_statement_still_runs_under_its_time_limit(executor):
    slow = "SELECT count(*) FROM range(100000000) a, range(100000000) b"
    assert executor.run("SELECT count(*) FROM range(10) a, range(10) b", 5.0).rows == [(100,)]
    first = executor.run(slow, 0.2)
    assert first.is_error and "0.2 s limit" in first.error
    assert len(executor._plans) == 2
    again = executor.run(slow, 0.2)
    assert again.is_error and "0.2 s limit" in again.error


def test_plans_stay_within_their_character_budget_least_recently_used_first():
    plans = StatementPlans(max_chars=300)
    for text in ("a" * 40, "b" * 40, "c" * 40):  # 120 characters each with its plan
        plans.put(text, _plan(text))
    assert plans.get("a" * 40) is None and len(plans) == 2
    assert plans.get("b" * 40) is not None  # now the most recently used
    plans.put("d" * 40, _plan("d" * 40))
    assert plans.get("c" * 40) is None and plans.get("b" * 40) is not None
    plans.put("e" * 200, _plan("e" * 200))  # larger than the whole budget: not kept
    assert plans.get("e" * 200) is None and len(plans) == 2
    assert plans.get(["not", "a", "string"]) is None
