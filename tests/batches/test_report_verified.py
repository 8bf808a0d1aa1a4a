"""Reports say which answers relied on a verified query, with its question; others say
nothing about it."""
from __future__ import annotations

import json
from decimal import Decimal

from shared.config import Settings
from shared.models import Batch, Job
from shared.reports import render
from shared.reports.document import build_document
from tests.batches.conftest import UNIT_USAGE

VERIFIED = {"verified_query_id": "vq-1", "question": "Which carrier had the <worst> delay?"}


def _document() -> dict:
    batch = Batch(id="b-1", title="Trusted", mode="standard", conversation_mode="separate")
    jobs = [Job(id=f"j-{i}", batch_index=i, message="Worst?", status="succeeded",
                model="claude-sonnet-4-5", answer_text="DL.", charts=[], verified=verified,
                cost_usd=Decimal("0.01"), **UNIT_USAGE)
            for i, verified in enumerate((VERIFIED, None))]
    return build_document(batch, jobs, Settings().price_for, {})


def test_each_format_marks_the_verified_answer_only():
    document = _document()
    assert [q["verified"] for q in document["questions"]] == [VERIFIED, None]
    assert json.loads(render(document, "json"))["questions"][0]["verified"] == VERIFIED
    html = render(document, "html").decode()
    assert html.count("Verified query: Which carrier had the &lt;worst&gt; delay?") == 1
    md = render(document, "md").decode()
    assert md.count("Verified query: Which carrier had the") == 1
