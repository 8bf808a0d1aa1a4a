"""``sunrise report``: question files, progress, and the written report, both through a
real HTTP API and in-process (``--local``)."""
from __future__ import annotations

import contextlib
import io
import threading

import click
import pytest
from click.testing import CliRunner
from rich.console import Console
from werkzeug.serving import make_server

from shared.config import get_settings
from sunrise.cli.main import main
from sunrise.cli.report import ProgressBar, load_questions
from tests.batches.conftest import chart_questions


@contextlib.contextmanager
def serving(app):
    """The Flask app on a real socket (127.0.0.1, a free port) in a thread."""
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(5)


def test_question_files(tmp_path):
    txt = tmp_path / "q.txt"
    txt.write_text("# monthly review\nHow many flights per origin?\n\n  Top 3 carriers  \n")
    assert load_questions(txt).questions == ["How many flights per origin?", "Top 3 carriers"]
    listed = tmp_path / "q.yaml"
    listed.write_text("- How many flights per origin?\n- Top 3 carriers\n")
    assert load_questions(listed).questions == ["How many flights per origin?", "Top 3 carriers"]
    mapped = tmp_path / "q.yml"
    mapped.write_text("title: Review\nconversation: shared\nquestions:\n  - Top 3 carriers\n")
    spec = load_questions(mapped)
    assert (spec.title, spec.conversation, spec.questions) == ("Review", "shared",
                                                              ["Top 3 carriers"])
    for bad in ("questions: 3\n", "- [nested]\n", "{unclosed\n", "# nothing\n"):
        path = tmp_path / ("bad.yaml" if not bad.startswith("#") else "bad.txt")
        path.write_text(bad)
        with pytest.raises(click.BadParameter):
            load_questions(path)


def test_progress_bar_draws_on_a_terminal():
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100)
    view = {"counts": {"queued": 1, "running": 0, "succeeded": 2, "failed": 0, "cancelled": 0},
            "total": 3, "done": 2, "progress": 0.667, "eta_s": 4.0}
    with ProgressBar(console) as bar:
        bar.update(view)
        bar.progress.refresh()
    drawn = out.getvalue()
    assert "2/3" in drawn and "2 succeeded" in drawn and "━" in drawn


def test_report_through_the_api_with_progress(app, tenant_key, celery_worker, fake_llm,
                                              tmp_path):
    questions = tmp_path / "questions.txt"
    questions.write_text("\n".join(chart_questions(3)) + "\n")
    out = tmp_path / "report.html"
    with serving(app) as url:
        result = CliRunner().invoke(main, ["report", str(questions), "-o", str(out),
                                           "--api", url, "--key", tenant_key,
                                           "--title", "CLI report"])
    assert result.exit_code == 0, result.output
    assert "3/3 questions done" in result.output and "report written to" in result.output
    html = out.read_text()
    assert html.startswith("<!doctype html>") and "CLI report" in html
    assert html.count("<svg") >= 3


def test_report_in_process_with_local_in_economy_mode(settings, fake_llm, tmp_path):
    questions = tmp_path / "questions.yaml"
    questions.write_text("title: Local\nmode: economy\nquestions:\n"
                         + "".join(f"  - {q}\n" for q in chart_questions(3)))
    out = tmp_path / "report.md"
    env = {"SUNRISE_DATABASE_URL": f"sqlite:///{tmp_path / 'local.db'}",
           "SUNRISE_DUCKDB_PATH": settings.duckdb_path,
           "ANTHROPIC_BASE_URL": settings.anthropic_base_url, "ANTHROPIC_API_KEY": "test-key"}
    get_settings.cache_clear()
    try:
        result = CliRunner().invoke(main, ["report", str(questions), "-o", str(out), "--local"],
                                    env=env)
    finally:
        get_settings.cache_clear()
    assert result.exit_code == 0, result.output
    assert "3/3 questions done" in result.output
    md = out.read_text()
    assert md.startswith("# Local") and md.count("](data:image/svg+xml;base64,") == 3
    assert "Economy mode (Message Batches API) cost" in md
    assert [e["path"] for e in fake_llm.log()].count("/v1/messages/batches") == 2
