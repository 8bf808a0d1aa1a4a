"""Gold files are validated with clear errors that name the question."""
from __future__ import annotations

import pytest

from shared.errors import ValidationFailed
from sunrise.eval.gold import load_gold


def write(tmp_path, text: str):
    path = tmp_path / "gold.yaml"
    path.write_text(text)
    return path


def test_a_valid_file_with_sql_and_values(tmp_path):
    gold = load_gold(write(tmp_path, """
title: Mine
questions:
  - {id: a, question: "How many?", sql: SELECT 1}
  - {id: b, question: "Which?", values: [[UA, 58665], [B6, 54635]], ordered: true, tier: hard}
  - {id: c, question: "Mean?", values: [12.64], tolerance: 0.01}
"""))
    a, b, c = gold.questions
    assert gold.title == "Mine" and a.tier == "unspecified" and a.ordered is None
    assert b.value_rows() == [("UA", 58665), ("B6", 54635)] and c.value_rows() == [(12.64,)]


def test_a_bare_list_is_a_gold_set(tmp_path):
    assert len(load_gold(write(tmp_path, "- {id: a, question: q, sql: SELECT 1}\n")).questions) == 1


@pytest.mark.parametrize(("text", "message"), [
    ("questions: []", "questions"),
    ("- {id: a, question: q}", "give exactly one of `sql`"),
    ("- {id: a, question: q, sql: SELECT 1, values: [1]}", "give exactly one of `sql`"),
    ("- {id: a, question: q, sql: '  '}", "`sql` is empty"),
    ("- {id: a, question: q, sql: SELECT 1}\n- {id: a, question: r, sql: SELECT 2}", "twice"),
    ("- {id: a, question: q, values: [1, [2]]}", "mixes rows"),
    ("- {id: a, question: q, sql: SELECT 1, tolerance: 2}", "tolerance"),
    ("- {id: a, question: q, sql: SELECT 1, colour: red}", "colour"),
    ("- {id: x1, question: q, sql: SELECT 1}\n- {id: x2, sql: SELECT 1}", "1 (id x2)"),
    ("{unclosed", "not a readable YAML file"),
])
def test_problems_are_named(tmp_path, text, message):
    with pytest.raises(ValidationFailed) as caught:
        load_gold(write(tmp_path, text))
    assert message in caught.value.detail and "gold.yaml" in caught.value.detail
