"""A 50-question batch on the sample data, through the API, a real Celery worker and the
offline model, ends in a report whose charts are real SVG that a browser draws."""
from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET

import pytest
from sqlalchemy import select

from shared.db import session_scope
from shared.models import Job
from tests.batches.conftest import chart_questions, wait_for_batch

pytestmark = pytest.mark.slow

SVG_NS = "{http://www.w3.org/2000/svg}"


def _svgs(html: str) -> list[ET.Element]:
    """Every inline <svg>...</svg> of the page, parsed as XML (raises if malformed)."""
    found, start = [], 0
    while (start := html.find("<svg", start)) != -1:
        end = html.index("</svg>", start) + len("</svg>")
        found.append(ET.fromstring(html[start:end]))
        start = end
    return found


@pytest.fixture(scope="module")
def finished_batch(client, auth, celery_worker, refusal, base_settings):
    """One 50-question batch (question 8 refused by the model), run to its report."""
    questions = chart_questions(50)
    questions[7] = f"{refusal} Why is the sky blue?"
    resp = client.post("/v1/batches", json={"questions": questions, "title": "Fifty questions"},
                       headers=auth)
    assert resp.status_code == 202, resp.get_data(as_text=True)
    accepted = resp.get_json()
    view = wait_for_batch(client, auth, accepted["batch_id"], timeout=120)
    reports = {fmt: client.get(f"/v1/batches/{accepted['batch_id']}/report?format={fmt}",
                               headers=auth) for fmt in ("html", "md", "json", "csv")}
    return {"accepted": accepted, "view": view, "questions": questions, "reports": reports,
            "settings": base_settings}


@pytest.fixture(scope="module")
def client(app):  # module-scoped twins of the conftest fixtures: one batch for all tests
    return app.test_client()


@pytest.fixture(scope="module")
def app(base_settings):
    from api import create_app

    return create_app(settings=base_settings)


@pytest.fixture(scope="module")
def auth(base_settings):
    import uuid

    from shared.keys import create_key

    with session_scope(base_settings.database_url) as s:
        key = create_key(s, f"tenant-{uuid.uuid4().hex[:10]}")
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture(scope="module")
def refusal(fake_llm_server):
    from tests.utils.fake_llm_control import FakeLlmControl

    control = FakeLlmControl(fake_llm_server.base_url)
    control.reset()
    yield control.scenario("refuse-batch", [{"stop_reason": "refusal", "text": "No."}])
    control.close()


def test_every_question_ends_and_is_counted(finished_batch):
    view, accepted = finished_batch["view"], finished_batch["accepted"]
    assert len(accepted["job_ids"]) == 50 and view["total"] == 50
    assert view["counts"] == {"queued": 0, "running": 0, "succeeded": 49, "failed": 1,
                              "cancelled": 0}
    assert view["progress"] == 1.0 and view["eta_s"] == 0.0
    assert view["job_ids"] == accepted["job_ids"]
    with session_scope(finished_batch["settings"].database_url) as s:
        jobs = s.scalars(select(Job).where(Job.batch_id == view["batch_id"])
                         .order_by(Job.batch_index)).all()
        assert [j.batch_index for j in jobs] == list(range(50))
        assert len({j.conversation_id for j in jobs}) == 50, "separate conversations"
        assert sum(j.input_tokens for j in jobs) == view["usage"]["input_tokens"]
        # The first question ran alone and wrote the system prompt to the cache; the
        # others read it.
        assert jobs[0].cache_creation_tokens > 0
        assert all(j.cache_read_tokens > 0 for j in jobs[1:] if j.status == "succeeded")
    assert view["cache_hit_ratio"] > 0.5


def test_html_report_is_one_file_with_valid_svg_charts(finished_batch):
    resp = finished_batch["reports"]["html"]
    assert resp.status_code == 200 and resp.mimetype == "text/html"
    assert "script-src" not in resp.headers["Content-Security-Policy"]
    html = resp.get_data(as_text=True)
    svgs = _svgs(html)
    assert len(svgs) >= 45, "one chart per multi-row answer"
    for svg in svgs:
        assert svg.tag == f"{SVG_NS}svg" and float(svg.get("width")) > 0
        assert any(el.tag in (f"{SVG_NS}path", f"{SVG_NS}rect") for el in svg.iter())
    lowered = html.lower()
    assert "<script" not in lowered and " src=" not in lowered and "<link" not in lowered
    assert "Fifty questions" in html and "Cache hit ratio" in html
    assert "refused" in html and "The model declined" in html
    assert "Total" in html and finished_batch["questions"][0] in html


@pytest.mark.browser
def test_html_report_renders_in_headless_chromium(finished_batch, tmp_path):
    from playwright.sync_api import sync_playwright

    path = tmp_path / "report.html"
    path.write_bytes(finished_batch["reports"]["html"].get_data())
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 900})
            page.goto(path.as_uri())
            sizes = page.evaluate("() => [...document.querySelectorAll('figure svg')]"
                                  ".map(s => { const r = s.getBoundingClientRect();"
                                  " return [r.width, r.height]; })")
            shot = page.screenshot(full_page=False)
        finally:
            browser.close()
    assert len(sizes) >= 45 and all(w > 50 and h > 50 for w, h in sizes)
    assert shot[:8] == b"\x89PNG\r\n\x1a\n" and len(shot) > 10_000


def test_markdown_json_and_csv_reports(finished_batch):
    reports = finished_batch["reports"]
    md = reports["md"].get_data(as_text=True)
    assert reports["md"].mimetype == "text/markdown"
    assert md.count("](data:image/svg+xml;base64,") >= 45
    assert "| | **Total** |" in md and "`refused`" in md

    document = reports["json"].get_json()
    assert document["total"] == 50 and len(document["questions"]) == 50
    failed = document["questions"][7]
    assert failed["status"] == "failed" and failed["error"]["code"] == "refused"
    first = document["questions"][0]
    assert first["charts"][0]["vega_lite"]["$schema"].endswith("v5.json")
    assert "svg" not in first["charts"][0]
    assert document["usage"]["cost_usd"] == pytest.approx(
        sum(q["usage"]["cost_usd"] for q in document["questions"]))
    assert 0.5 < document["cache_hit_ratio"] <= 1
    # Each answer names the queries behind it, and the offline analyst's figures all
    # come from them.
    (query,) = first["queries"]
    assert query["query_id"] == first["charts"][0]["query_id"] == 1
    assert query["sql"] == first["charts"][0]["sql"] and query["rows"] == 16
    assert failed["queries"] == [] and failed["numbers"] is None
    answered = [q for q in document["questions"] if q["status"] == "succeeded"]
    assert document["numbers"]["checked"] == sum(q["numbers"]["checked"] for q in answered) > 49
    assert document["numbers"]["unsupported"] == document["numbers"]["answers_flagged"] == 0

    rows = list(csv.DictReader(io.StringIO(reports["csv"].get_data(as_text=True))))
    carriers = [r for r in rows if r["question_index"] == "1" and r["column"] == "flights"]
    assert len(carriers) == 16 and max(int(r["value"]) for r in carriers) == 58665
    assert reports["csv"].headers["Content-Disposition"].startswith("attachment")
    json.dumps(document)  # everything in it is plain JSON
