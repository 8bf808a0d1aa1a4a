"""Reports show each answer's faithfulness check: unsupported figures are marked in the
text, counted per answer and for the whole batch."""
from __future__ import annotations

import json
from decimal import Decimal

from shared.config import Settings
from shared.models import Batch, Job
from shared.reports import render
from shared.reports.document import build_document, mark_unsupported
from tests.batches.conftest import UNIT_USAGE

ANSWER = "UA flew 58,665 flights, about 12,345 more than <b>anyone</b>. {{chart:0}}"
NUMBERS = {"checked": 2, "unsupported": [{"text": "12,345", "position": ANSWER.index("12,345")}]}


def _document() -> dict:
    batch = Batch(id="b-1", title="Checked", mode="standard", conversation_mode="separate")
    jobs = [
        Job(id="j-1", batch_index=0, message="Who flew most?", status="succeeded",
            model="claude-sonnet-4-5", answer_text=ANSWER, charts=[], numbers=NUMBERS,
            parse_path="direct", cost_usd=Decimal("0.01"), **UNIT_USAGE),
        Job(id="j-2", batch_index=1, message="And least?", status="succeeded",
            model="claude-sonnet-4-5", answer_text="OO flew 32.", charts=[],
            numbers={"checked": 1, "unsupported": []}, cost_usd=Decimal("0.01"), **UNIT_USAGE),
    ]
    queries = {"j-1": [{"query_id": 1, "sql": "SELECT 1", "rows": 16}]}
    return build_document(batch, jobs, Settings().price_for, queries)


def test_the_document_counts_and_keeps_each_check():
    document = _document()
    assert document["numbers"] == {"checked": 3, "unsupported": 1, "answers_flagged": 1}
    first, second = document["questions"]
    assert first["numbers"] == NUMBERS and first["queries"][0]["sql"] == "SELECT 1"
    assert second["queries"] == []
    assert json.loads(render(document, "json"))["numbers"]["unsupported"] == 1


def test_html_marks_the_figure_and_says_why():
    html = render(_document(), "html").decode()
    assert ('about <mark class="unsupported" title="not found in any query result">12,345'
            "</mark> more than &lt;b&gt;anyone&lt;/b&gt;") in html
    assert html.count("<mark") == 1
    assert "1 of 2 figures not found in any query result: 12,345." in html
    assert "Every figure (1) checked against the query results." in html
    assert "Figures checked" in html


def test_markdown_marks_the_figure():
    md = render(_document(), "md").decode()
    assert "about 12,345\u00a0\u26a0 more" in md and "58,665\u00a0\u26a0" not in md
    assert "Figures checked against the query results: **3**, 1 not found" in md


def test_a_stale_position_marks_nothing():
    assert mark_unsupported("UA flew 58,665", {"unsupported": [{"text": "999", "position": 3}]}) \
        == "UA flew 58,665"
    assert mark_unsupported("UA flew 58,665", None) == "UA flew 58,665"
