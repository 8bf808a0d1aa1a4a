"""Every report format says when each answer's data was current (``data_as_of``): the
live dataset's first query, a snapshot's import; a question that read no data says
nothing."""
from __future__ import annotations

import csv
import datetime as dt
import io
import json
from decimal import Decimal

from shared.config import Settings
from shared.models import Batch, Job
from shared.reports import render
from shared.reports.document import build_document
from tests.batches.conftest import UNIT_USAGE

AS_OF = dt.datetime(2026, 12, 2, 6, 0, 5, 250000)
CHART = {"type": "bar", "title": "Per region", "columns": ["region", "n"],
         "data": [{"region": "north", "n": 2}]}


def _document() -> dict:
    batch = Batch(id="b-1", title="Fresh", mode="standard", conversation_mode="separate")
    jobs = [
        Job(id="j-1", batch_index=0, message="Per region?", status="succeeded",
            model="claude-sonnet-4-5", answer_text="North has 2. {{chart:0}}", charts=[CHART],
            numbers={"checked": 1, "unsupported": []}, cost_usd=Decimal("0.01"),
            data_as_of=AS_OF, **UNIT_USAGE),
        Job(id="j-2", batch_index=1, message="Refused?", status="failed", model="claude-sonnet-4-5",
            error_code="refusal", error_message="no", cost_usd=Decimal("0.01"), **UNIT_USAGE),
    ]
    return build_document(batch, jobs, Settings().price_for, {})


def test_each_format_carries_data_as_of():
    document = _document()
    first, second = document["questions"]
    assert first["data_as_of"] == "2026-12-02T06:00:05.250000Z" and second["data_as_of"] is None
    assert json.loads(render(document, "json"))["questions"][0]["data_as_of"] == \
        first["data_as_of"]
    html = render(document, "html").decode()
    assert html.count("Data as of 2026-12-02 06:00:05 UTC.") == 1
    md = render(document, "md").decode()
    assert md.count("_Data as of 2026-12-02 06:00:05 UTC._") == 1
    rows = list(csv.DictReader(io.StringIO(render(document, "csv").decode())))
    assert rows and {r["data_as_of"] for r in rows} == {first["data_as_of"]}
