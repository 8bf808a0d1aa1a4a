"""``sunrise eval``: in-process on a fresh setup (``--offline``: the offline model started
for the run), through the real API and worker, ``--compare`` on two runs, and
``--dataset``."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from flask import Flask, jsonify, request

from shared.config import get_settings
from shared.errors import BadRequest
from sunrise.cli.main import main
from tests.batches.test_report_cli import serving

GOLD = """
title: Small gold set
questions:
  - id: flights-count
    tier: easy
    question: How many flights are in the data?
    sql: SELECT count(*) FROM flights
  - id: top-carrier
    tier: easy
    question: Which carrier flew the most flights?
    sql: SELECT carrier, count(*) FROM flights GROUP BY 1 ORDER BY 2 DESC LIMIT 1
  - id: jfk-july
    tier: medium
    question: How many flights left JFK in July?
    sql: SELECT count(*) FROM flights WHERE origin = 'JFK' AND month = 7
  - id: mean-delay
    tier: easy
    question: What is the average departure delay?
    values: [12.64]
"""


@pytest.fixture(scope="module")
def local_run(base_settings, tmp_path_factory):
    """One in-process evaluation with no model configured: the fresh-clone path."""
    folder = tmp_path_factory.mktemp("eval")
    gold = folder / "gold.yaml"
    gold.write_text(GOLD)
    env = {"SUNRISE_DATABASE_URL": f"sqlite:///{folder / 'local.db'}",
           "SUNRISE_DUCKDB_PATH": base_settings.duckdb_path,
           "ANTHROPIC_API_KEY": None, "ANTHROPIC_BASE_URL": None,
           "SUNRISE_ANTHROPIC_API_KEY": None, "SUNRISE_ANTHROPIC_BASE_URL": None}
    get_settings.cache_clear()
    try:
        refused = CliRunner().invoke(main, ["eval", str(gold), "--local", "-o",
                                            str(folder / "eval.html")], env=env)
        result = CliRunner().invoke(main, ["eval", str(gold), "--local", "--offline", "-o",
                                           str(folder / "eval.html")], env=env)
    finally:
        get_settings.cache_clear()
    # No key, no mystery: without --offline the run stops before asking anything.
    assert refused.exit_code == 2 and "ANTHROPIC_API_KEY is not set" in refused.output
    assert result.exit_code == 0, result.output
    return {"folder": folder, "output": result.output,
            "report": json.loads((folder / "eval.json").read_text()),
            "html": (folder / "eval.html").read_text()}


def test_in_process_run_scores_every_question_honestly(local_run, sample_query):
    report, output = local_run["report"], local_run["output"]
    assert "offline model" in output and "report written to" in output
    assert report["kind"] == "sunrise-eval" and report["mode"] == "local"
    assert report["offline_model"] is True
    verdicts = {q["id"]: (q["execution"]["correct"], q["answer"]["correct"])
                for q in report["questions"]}
    # The offline model answers the simple questions and not the filtered one.
    assert verdicts == {"flights-count": (True, True), "top-carrier": (True, True),
                        "jfk-july": (False, False), "mean-delay": (True, True)}
    jfk = next(q for q in report["questions"] if q["id"] == "jfk-july")
    ((jfk_july,),) = sample_query("SELECT count(*) FROM flights WHERE origin = 'JFK' AND month = 7")
    assert jfk["sunrise"]["sql"] and jfk["gold"]["rows"] == [[jfk_july]]
    assert jfk["execution"]["gold_row"] == [jfk_july] and jfk["execution"]["sunrise_row"]
    summary = report["summary"]
    assert (summary["execution_correct"], summary["scored"]) == (3, 4)
    assert summary["execution_accuracy"] == 0.75 and summary["answer_accuracy"] == 0.75
    assert summary["by_tier"]["easy"]["execution_accuracy"] == 1.0
    assert summary["by_tier"]["medium"]["execution_accuracy"] == 0.0
    assert summary["faithfulness"] == 1.0 and summary["figures_checked"] >= 4
    assert summary["cost_usd"] > 0 and summary["tokens"]["output_tokens"] > 0
    assert summary["latency_ms"]["p50"] is not None and summary["rounds"]["max"] == 1
    assert summary["parse_paths"] == {"direct": 4} and summary["failure_codes"] == {}


def test_the_html_report_stands_alone_and_shows_each_question(local_run):
    html = local_run["html"]
    assert html.startswith("<!doctype html>") and "<script" not in html
    assert "src=" not in html and "href=\"http" not in html
    assert "Evaluation: Small gold set" in html and "it is not Claude" in html
    assert "Execution accuracy" in html and "75.0%" in html
    assert "SELECT count(*) FROM flights WHERE origin = &#x27;JFK&#x27;" in html
    assert "First differing rows" in html and html.count('<section class="question"') == 4


def test_compare_two_runs(local_run):
    folder, report = local_run["folder"], local_run["report"]
    earlier = json.loads(json.dumps(report))
    earlier["title"] = "Before the prompt change"
    jfk = next(q for q in earlier["questions"] if q["id"] == "jfk-july")
    jfk["execution"]["correct"] = jfk["answer"]["correct"] = True
    flights = next(q for q in earlier["questions"] if q["id"] == "flights-count")
    flights["execution"]["correct"] = False
    earlier["summary"]["execution_accuracy"] = 0.75
    earlier["summary"]["cost_usd"] = report["summary"]["cost_usd"] * 2
    earlier["questions"].append({**flights, "id": "gone"})
    (folder / "earlier.json").write_text(json.dumps(earlier))

    # A stored run's JSON is re-rendered (nothing is asked again) and compared.
    result = CliRunner().invoke(main, ["eval", str(folder / "eval.json"), "--compare",
                                       str(folder / "earlier.json"), "-o",
                                       str(folder / "compared.html")])
    assert result.exit_code == 0, result.output
    comparison = json.loads((folder / "compared.json").read_text())["comparison"]
    assert (comparison["fixed"], comparison["broken"]) == (1, 1)
    assert {c["id"] for c in comparison["changed"]} == {"jfk-july", "flights-count"}
    assert comparison["only_earlier"] == ["gone"] and comparison["only_current"] == []
    cost = next(m for m in comparison["metrics"] if m["key"] == "cost_usd")
    assert cost["delta"] == pytest.approx(-report["summary"]["cost_usd"])
    accuracy = next(m for m in comparison["metrics"] if m["key"] == "execution_accuracy")
    assert accuracy["delta"] == 0
    html = (folder / "compared.html").read_text()
    assert "Compared with Before the prompt change" in html and "1 questions fixed" in html
    assert "1 questions fixed, 1 broken" in result.output


def test_through_the_api_and_a_worker(app, tenant_key, celery_worker, fake_llm, tmp_path):
    gold = tmp_path / "gold.yaml"
    gold.write_text(GOLD)
    with serving(app) as url:
        result = CliRunner().invoke(main, ["eval", str(gold), "--api", url, "--key", tenant_key,
                                           "-o", str(tmp_path / "api.html")])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "api.json").read_text())
    assert report["mode"] == "api" and report["offline_model"] is False
    assert report["summary"]["execution_correct"] == 3 and report["summary"]["answered"] == 4


class CapturingApi:
    """A stand-in for the batch endpoints that records what the CLI sends and answers one
    question as a Sunrise answer would (real HTTP, so the CLI's client code runs)."""

    def __init__(self):
        self.bodies: list[dict] = []
        self.app = Flask("capture")
        self.app.add_url_rule("/v1/batches", "create", self.create, methods=["POST"])
        self.app.add_url_rule("/v1/batches/b-1", "view", self.view)
        self.app.add_url_rule("/v1/batches/b-1/report", "report", self.report)

    def create(self):
        self.bodies.append(request.get_json())
        return jsonify({"batch_id": "b-1", "job_ids": ["j-1"]}), 202

    def view(self):
        return jsonify({"status": "completed", "total": 1, "done": 1, "progress": 1.0,
                        "eta_s": 0, "counts": {"succeeded": 1}, "usage": {"cost_usd": 0.01}})

    def report(self):
        assert request.args["format"] == "json"
        usage = {"input_tokens": 10, "output_tokens": 5, "cache_read_tokens": 0,
                 "cache_creation_tokens": 0, "cost_usd": 0.01, "tool_rounds": 1,
                 "sql_executed": 1, "wall_ms": 40}
        return jsonify({"batch_id": "b-1", "models": ["claude-x"], "questions": [{
            "index": 0, "job_id": "j-1", "status": "succeeded", "model": "claude-x",
            "answer_text": "There were 336,776 flights.", "charts": [], "parse_path": "direct",
            "numbers": {"checked": 1, "unsupported": []}, "error": None, "usage": usage,
            "queries": [{"query_id": 1, "sql": "SELECT count(*) AS n FROM flights", "rows": 1}],
        }]})



def test_dataset_id_is_sent_only_when_given(tmp_path, base_settings):
    gold = tmp_path / "gold.yaml"
    gold.write_text("- {id: n, question: 'How many flights?', sql: SELECT count(*) FROM flights}\n")
    api = CapturingApi()
    with serving(api.app) as url:
        plain = CliRunner().invoke(main, ["eval", str(gold), "--api", url, "-o",
                                          str(tmp_path / "plain.html")])
        with_dataset = CliRunner().invoke(main, [
            "eval", str(gold), "--api", url, "--dataset", "ds-42", "--gold-db",
            base_settings.duckdb_path, "-o", str(tmp_path / "dataset.html")])
    assert plain.exit_code == 0, plain.output
    assert with_dataset.exit_code == 0, with_dataset.output
    assert "dataset_id" not in api.bodies[0] and api.bodies[1]["dataset_id"] == "ds-42"
    report = json.loads((tmp_path / "dataset.json").read_text())
    assert report["dataset_id"] == "ds-42" and report["summary"]["execution_correct"] == 1


def test_a_dataset_gold_runs_on_its_newest_version(tmp_path, base_settings):
    from sunrise.eval.gold_db import gold_database

    settings = base_settings.model_copy(update={"data_dir": str(tmp_path)})
    folder = tmp_path / "ds-1"
    folder.mkdir()
    for name in ("v1.duckdb", "v10.duckdb", "v2.duckdb", ".v11.duckdb.building", "notes.txt"):
        (folder / name).write_text("")
    assert gold_database(settings, "ds-1") == folder / "v10.duckdb"
    assert gold_database(settings, None) == Path(base_settings.duckdb_path)
    assert gold_database(settings, "ds-1", "/x.duckdb") == Path("/x.duckdb")
    with pytest.raises(BadRequest, match="No built version of dataset ds-2"):
        gold_database(settings, "ds-2")
    with pytest.raises(BadRequest, match="not a dataset id"):
        gold_database(settings, "../etc")


def test_dataset_needs_its_gold_database_and_the_api(tmp_path):
    gold = tmp_path / "gold.yaml"
    gold.write_text("- {id: n, question: 'How many?', sql: SELECT 1}\n")
    no_db = CliRunner().invoke(main, ["eval", str(gold), "--dataset", "ds-unknown", "-o",
                                      str(tmp_path / "x.html")])
    assert no_db.exit_code != 0 and "--gold-db" in no_db.output
    local = CliRunner().invoke(main, ["eval", str(gold), "--local", "--dataset", "ds-1"])
    assert local.exit_code != 0 and "--dataset works through the API" in local.output
    broken = tmp_path / "broken.yaml"
    broken.write_text("- {id: n, question: q}\n")
    invalid = CliRunner().invoke(main, ["eval", str(broken)])
    assert invalid.exit_code != 0 and "give exactly one of `sql`" in invalid.output
