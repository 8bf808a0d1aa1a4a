"""The report's CSV never hands a spreadsheet a formula (issue 31, item 8): a text cell
starting with ``= + - @``, a tab or a CR is prefixed with ``'``, in the long CSV and in
one chart's CSV, questions, titles and headers included; numbers stay numbers."""
from __future__ import annotations

import csv
import io
from decimal import Decimal

import pytest

from shared.config import Settings
from shared.models import Batch, Job
from shared.reports import render
from shared.reports.csv_cells import safe_cell
from shared.reports.document import build_document
from tests.batches.conftest import UNIT_USAGE

HOSTILE = ["=HYPERLINK(\"http://evil\",\"x\")", "+cmd|' /C calc'!A0", "@SUM(A1:A9)", "-2+3",
           "\t=1", "\r=1"]


def _document() -> dict:
    batch = Batch(id="b-1", title="=Title", mode="standard", conversation_mode="separate")
    chart = {"type": "bar", "title": "@chart", "columns": ["=name", "amount"],
             "data": [{"=name": cell, "amount": -2} for cell in HOSTILE]
             + [{"=name": "plain", "amount": Decimal("-1.5")}]}
    job = Job(id="j-1", batch_index=0, message="=1+1 who?", status="succeeded",
              model="claude-sonnet-4-5", answer_text="ok {{chart:0}}", charts=[chart],
              numbers={"checked": 0, "unsupported": []}, cost_usd=Decimal("0.01"), **UNIT_USAGE)
    return build_document(batch, [job], Settings().price_for, {})


def _cells(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


@pytest.mark.parametrize("value", HOSTILE)
def test_a_formula_like_text_gets_a_quote(value):
    assert safe_cell(value) == "'" + value


def test_numbers_stay_numbers_and_plain_text_is_untouched():
    assert safe_cell(-2) == -2 and safe_cell(-1.5) == -1.5 and safe_cell(Decimal("-3")) == -3
    assert safe_cell(None) == "" and safe_cell("plain") == "plain" and safe_cell(True) == "True"
    assert safe_cell("a=b") == "a=b"


def test_the_long_csv_neutralises_values_questions_titles_and_columns():
    rows = _cells(render(_document(), "csv").decode())
    body = [dict(zip(rows[0], r)) for r in rows[1:]]
    names = [r["value"] for r in body if r["column"] == "'=name"]
    assert names == ["'" + v for v in HOSTILE] + ["plain"]
    assert {r["question"] for r in body} == {"'=1+1 who?"}
    assert {r["chart_title"] for r in body} == {"'@chart"}
    assert [r["value"] for r in body if r["column"] == "amount"] == ["-2"] * 6 + ["-1.5"]


def test_one_charts_csv_neutralises_header_and_cells():
    rows = _cells(render(_document(), "csv", question=1, chart=1).decode())
    assert rows[0] == ["'=name", "amount"]
    assert [r[0] for r in rows[1:]] == ["'" + v for v in HOSTILE] + ["plain"]
    assert [r[1] for r in rows[1:]] == ["-2"] * 6 + ["-1.5"]
    assert not any(cell.startswith(("=", "+", "@", "\t", "\r"))
                   for row in rows for cell in row)


def test_a_carriage_return_inside_a_cell_is_quoted_and_does_not_start_a_row():
    rows = _cells(render(_document(), "csv", question=1, chart=1).decode())
    assert len(rows) == 1 + len(HOSTILE) + 1
    assert rows[len(HOSTILE)][0] == "'\r=1"
