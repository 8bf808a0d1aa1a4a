"""``sunrise eval export``: a dataset's verified queries (and up-voted answers' queries)
become a gold file that ``sunrise eval`` runs through the API and scores."""
from __future__ import annotations

import json

import pytest
import yaml
from click.testing import CliRunner

from engine.datasets import version_path
from sunrise.cli.main import main
from sunrise.eval.export import gold_items
from tests.api.test_verified_queries import CORRECTED, FLIGHTS, ask
from tests.batches.test_report_cli import serving
from tests.utils.datasets import upload, wait_imported

pytestmark = pytest.mark.usefixtures("celery_worker")


def test_export_writes_a_gold_file_that_eval_runs(app, client, auth, tenant_key, settings,
                                                  fake_llm, tmp_path):
    dataset = upload(client, auth, "Flights", ("flights.csv", FLIGHTS)).get_json()["dataset_id"]
    assert wait_imported(client, auth, dataset)["status"] == "ready"
    kept = client.post(f"/v1/datasets/{dataset}/verified-queries", headers=auth, json={
        "question": "Which carrier had the highest average arrival delay?", "sql": CORRECTED})
    assert kept.status_code == 201
    liked = ask(client, auth, dataset, "What is the total distance by origin?")
    assert client.post(f"/v1/jobs/{liked['job_id']}/feedback", headers=auth,
                       json={"rating": "up"}).status_code == 201
    gold = tmp_path / "gold.yaml"
    with serving(app) as url:
        plain = CliRunner().invoke(main, ["eval", "export", "--dataset", dataset, "-o",
                                          str(tmp_path / "plain.yaml"), "--api", url,
                                          "--key", tenant_key])
        exported = CliRunner().invoke(main, ["eval", "export", "--dataset", dataset, "-o",
                                             str(gold), "--include-upvoted", "--api", url,
                                             "--key", tenant_key])
        assert plain.exit_code == 0 and exported.exit_code == 0, exported.output
        assert len(yaml.safe_load((tmp_path / "plain.yaml").read_text())["questions"]) == 1
        questions = yaml.safe_load(gold.read_text())["questions"]
        assert [q["tier"] for q in questions] == ["verified", "upvoted"]
        assert questions[0]["sql"] == CORRECTED
        assert questions[1]["question"] == "What is the total distance by origin?"
        ran = CliRunner().invoke(main, [
            "eval", str(gold), "--dataset", dataset, "--gold-db",
            str(version_path(settings.data_dir, dataset, 1)), "--api", url, "--key",
            tenant_key, "-o", str(tmp_path / "eval.html")])
    assert ran.exit_code == 0, ran.output
    report = json.loads((tmp_path / "eval.json").read_text())
    assert report["summary"]["scored"] == 2 and report["summary"]["execution_correct"] == 2


def test_an_empty_dataset_exports_nothing_and_says_so(app, client, auth, tenant_key, tmp_path):
    dataset = upload(client, auth, "Flights", ("flights.csv", FLIGHTS)).get_json()["dataset_id"]
    assert wait_imported(client, auth, dataset)["status"] == "ready"
    with serving(app) as url:
        empty = CliRunner().invoke(main, ["eval", "export", "--dataset", dataset, "-o",
                                          str(tmp_path / "g.yaml"), "--api", url,
                                          "--key", tenant_key])
        unknown = CliRunner().invoke(main, ["eval", "export", "--dataset", "nope", "-o",
                                            str(tmp_path / "g.yaml"), "--api", url,
                                            "--key", tenant_key])
    assert empty.exit_code != 0 and "no verified queries" in empty.output
    assert unknown.exit_code != 0 and "nope" in unknown.output
    assert not (tmp_path / "g.yaml").exists()


def test_a_verified_question_wins_over_the_same_up_voted_one():
    items = gold_items(
        [{"verified_query_id": "v1", "question": "Flights?", "sql": "SELECT 1"}],
        [{"job_id": "j1", "question": "flights? ", "sql": "SELECT 2"},
         {"job_id": "j2", "question": "No SQL", "sql": None}])
    assert [i["id"] for i in items] == ["verified-v1"]
