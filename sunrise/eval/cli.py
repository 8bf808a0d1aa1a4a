"""``sunrise eval QUESTIONS.yaml``: how often Sunrise answers your questions correctly.

Sunrise answers every gold question as one batch, through the HTTP API (``--api``,
``--key``) or in this process (``--local``); each answer is then scored (execution
accuracy, answer accuracy, faithfulness, tokens, cost, latency, rounds, parse paths,
failure codes) and the run written as JSON and self-contained HTML. ``--compare``
puts an earlier run's JSON beside it. Given an earlier run's JSON instead of a gold
file, nothing is asked again: the report is rendered (and compared) from it.

In-process with ``--offline``, the questions go to Sunrise's offline model, started
here for the run, and the report says so; without it and without ``ANTHROPIC_API_KEY``
(or ``ANTHROPIC_BASE_URL``) the command stops at once and says how to go on.
"""
from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import httpx
from rich.console import Console

from shared.config import Settings, get_settings
from shared.errors import SunriseError
from sunrise.cli.api_failure import api_failure
from sunrise.cli.report import ProgressBar
from sunrise.cli.run_options import run_options
from sunrise.client import ApiError, NotSunriseApi
from sunrise.eval.compare import compare_runs
from sunrise.eval.gold import load_gold
from sunrise.eval.gold_db import EvalDatabase, gold_database
from sunrise.eval.report_html import render_eval_html
from sunrise.eval.run import answer_questions, build_report, load_report, score_run
from sunrise.offline import llm_settings


class EvalCommand(click.Command):
    """``sunrise eval QUESTIONS.yaml`` scores; ``sunrise eval export ...`` writes a gold
    file. A command with one subcommand rather than a group, so that the gold file stays
    the first argument as it always was."""

    subcommands = ("export",)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] in self.subcommands:
            ctx.meta["sunrise.eval.sub"] = (args[0], args[1:])
            return []
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        sub = ctx.meta.get("sunrise.eval.sub")
        if sub is None:
            return super().invoke(ctx)
        from sunrise.eval.export import export_command

        name, args = sub
        with export_command.make_context(f"{ctx.info_name} {name}", args, parent=ctx) as sub_ctx:
            return export_command.invoke(sub_ctx)


@click.command("eval", cls=EvalCommand, epilog="sunrise eval export --dataset ID -o gold.yaml "
               "[--include-upvoted] writes a dataset's verified queries as a gold file.")
@click.argument("questions_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              default=Path("eval-report.html"), show_default=True,
              help="The HTML report; the JSON goes beside it (same name, .json).")
@click.option("--compare", "earlier", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="An earlier run's JSON report to compare with.")
@click.option("--dataset", "dataset_id", default=None, help="Ask about this dataset (API only).")
@click.option("--gold-db", default=None, type=click.Path(exists=True, dir_okay=False),
              help="The DuckDB file gold SQL runs against (default: the dataset's newest "
                   "version, else the built-in dataset).")
@run_options
def eval_command(questions_file: Path, output: Path, earlier: Path | None,
                 dataset_id: str | None, gold_db: str | None, local: bool, offline: bool,
                 api_url: str, api_key: str | None, timeout: float) -> None:
    """Score Sunrise on the gold questions of QUESTIONS_FILE (or re-render a run's JSON)."""
    console = Console(stderr=True)
    try:
        if questions_file.suffix.lower() == ".json":
            report = load_report(questions_file)
        else:
            report = _evaluate(questions_file, console, dataset_id=dataset_id, gold_db=gold_db,
                               local=local, offline=offline, api_url=api_url, api_key=api_key,
                               timeout=timeout)
        if earlier is not None:
            report["comparison"] = compare_runs(report, load_report(earlier))
    except (SunriseError, ValueError) as exc:
        raise click.ClickException(str(getattr(exc, "detail", exc))) from exc
    html_path, json_path = output.with_suffix(".html"), output.with_suffix(".json")
    if json_path != questions_file:
        json_path.write_text(json.dumps(report, indent=1, default=str), encoding="utf-8")
    html_path.write_text(render_eval_html(report), encoding="utf-8")
    _print_summary(console, report, html_path, json_path)


def _evaluate(questions_file: Path, console: Console, *, dataset_id: str | None,
              gold_db: str | None, local: bool, offline: bool, api_url: str,
              api_key: str | None, timeout: float) -> dict[str, Any]:
    from sunrise.local import ensure_sample_db

    gold = load_gold(questions_file)
    if local and dataset_id is not None:
        raise click.UsageError("--dataset works through the API; the in-process run answers "
                               "on the built-in dataset")
    if offline and not local:
        raise click.UsageError("--offline answers in this process: add --local")
    settings = get_settings()
    database = gold_database(settings, dataset_id, gold_db)
    if gold_db is None and dataset_id is None:
        ensure_sample_db(settings)
    with _model(settings, local, offline, console) as run_settings:
        console.print(f"{len(gold.questions)} gold questions from {questions_file}"
                      + (" (in-process)" if local else f" via {api_url}"))
        with ProgressBar(console) as bar:
            try:
                document = answer_questions(gold, bar, run_settings, local=local,
                                            api_url=api_url, api_key=api_key,
                                            dataset_id=dataset_id, timeout=timeout)
            except (httpx.HTTPError, ApiError, NotSunriseApi) as exc:
                raise api_failure(exc, api_url) from exc
    db = EvalDatabase(database, settings)
    try:
        questions = score_run(gold, document, db)
    finally:
        db.close()
    return build_report(gold, questions_file, document, questions, offline_model=offline,
                        local=local, api_url=api_url, dataset_id=dataset_id, database=database)


@contextlib.contextmanager
def _model(settings: Settings, local: bool, offline: bool,
           console: Console) -> Iterator[Settings]:
    """The settings to answer with: in-process, those of ``llm_settings`` (the offline
    model with ``offline``; a clear stop when no model is configured)."""
    if not local:
        yield settings
        return
    with llm_settings(settings, offline=offline, console=console) as run_settings:
        yield run_settings


def _print_summary(console: Console, report: dict[str, Any], html_path: Path,
                   json_path: Path) -> None:
    s = report["summary"]

    def pct(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.1%}"

    console.print(f"execution accuracy {pct(s['execution_accuracy'])} "
                  f"({s['execution_correct']}/{s['scored']}), answer accuracy "
                  f"{pct(s['answer_accuracy'])}, faithful answers {pct(s['faithfulness'])}, "
                  f"cost ${s['cost_usd']:.4f}, latency p50 {s['latency_ms']['p50']} ms / p95 "
                  f"{s['latency_ms']['p95']} ms")
    for tier, t in s["by_tier"].items():
        console.print(f"  {tier}: execution {pct(t['execution_accuracy'])}, answer "
                      f"{pct(t['answer_accuracy'])} ({t['questions']} questions)")
    comparison = report.get("comparison")
    if comparison:
        for metric in comparison["metrics"][:4]:
            console.print(f"  vs earlier, {metric['label'].lower()}: {metric['before']} → "
                          f"{metric['after']}")
        console.print(f"  {comparison['fixed']} questions fixed, {comparison['broken']} broken")
    console.print(f"report written to {html_path} and {json_path}")
