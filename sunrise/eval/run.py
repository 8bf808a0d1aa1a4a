"""One evaluation: Sunrise answers the gold questions as one batch, through the normal
pipeline (the HTTP API, or the same runner in this process), then every answer is
scored and the run assembled into the JSON report the HTML is rendered from."""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from shared.config import Settings
from sunrise.cli.report import ProgressBar, run_local, run_remote
from sunrise.eval.gold import GoldSet
from sunrise.eval.gold_db import EvalDatabase
from sunrise.eval.scoring import score_question, summarise

REPORT_KIND = "sunrise-eval"
REPORT_VERSION = 1


def answer_questions(gold: GoldSet, bar: ProgressBar, settings: Settings, *, local: bool,
                     api_url: str, api_key: str | None, dataset_id: str | None,
                     timeout: float) -> dict[str, Any]:
    """The batch report document of Sunrise answering every gold question (in order, each
    in its own conversation; in this process under ``settings`` when ``local``).
    ``dataset_id`` is sent only when given."""
    questions = [item.question for item in gold.questions]
    options: dict[str, Any] = {"title": gold.title or "Evaluation", "mode": "standard",
                               "conversation": "separate"}
    if local:
        document, _view = run_local(questions, options, bar, settings)
        return document
    if dataset_id is not None:
        options["dataset_id"] = dataset_id
    body, _view = run_remote(api_url, api_key, questions, options, "json", bar, timeout)
    return json.loads(body)


def score_run(gold: GoldSet, document: dict[str, Any], db: EvalDatabase) -> list[dict[str, Any]]:
    """Every gold question scored against the answer at the same position."""
    answers = sorted(document["questions"], key=lambda q: q["index"])
    if len(answers) != len(gold.questions):
        raise ValueError(f"the batch holds {len(answers)} answers for "
                         f"{len(gold.questions)} questions")
    return [score_question(item, answer, db) for item, answer in zip(gold.questions, answers,
                                                                    strict=True)]


def build_report(gold: GoldSet, gold_file: Path, document: dict[str, Any],
                 questions: list[dict[str, Any]], *, offline_model: bool, local: bool,
                 api_url: str | None, dataset_id: str | None, database: Path) -> dict[str, Any]:
    """The evaluation report (what ``-o x.json`` holds and the HTML shows)."""
    return {
        "kind": REPORT_KIND, "version": REPORT_VERSION,
        "title": gold.title or gold_file.stem,
        "gold_file": str(gold_file),
        "generated_at": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "mode": "local" if local else "api",
        "api": None if local else api_url,
        "dataset_id": dataset_id,
        "database": str(database),
        "models": document.get("models") or [],
        "offline_model": offline_model,
        "batch_id": document.get("batch_id"),
        "summary": summarise(questions),
        "questions": questions,
    }


def load_report(path: Path) -> dict[str, Any]:
    """An earlier evaluation report (JSON); raises ValueError when it is not one."""
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path} is not a readable JSON file: {exc}") from exc
    if not isinstance(report, dict) or report.get("kind") != REPORT_KIND:
        raise ValueError(f"{path} is not a sunrise eval report (written by `sunrise eval -o`)")
    return report
