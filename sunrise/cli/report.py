"""``sunrise report FILE -o report.html``: a batch from a file of questions, with a live
progress bar, written out as HTML, Markdown, JSON or CSV.

FILE is ``.txt`` (one question a line; blank lines and ``#`` comments skipped) or
``.yaml``/``.yml`` (a list of questions, or a mapping with ``questions`` and
optionally ``title``, ``mode`` and ``conversation``). The batch goes through the
HTTP API (``--api``, ``--key``) or, with ``--local``, runs in this process.
"""
from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

import click
import httpx
import yaml
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from shared.reports import FORMATS
from shared.reports.formatting import fmt_usd
from sunrise.cli.api_failure import api_failure
from sunrise.cli.console_output import LiveProgress
from sunrise.cli.run_options import run_options
from sunrise.client import ApiError, NotSunriseApi, read_answer

POLL_S = 0.5


@dataclasses.dataclass
class BatchFile:
    questions: list[str]
    title: str = ""
    mode: str | None = None
    conversation: str | None = None


def load_questions(path: Path) -> BatchFile:
    """The questions (and options) of a .txt or .yaml file; raises click.BadParameter."""
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() in (".yaml", ".yml"):
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise click.BadParameter(f"{path} is not valid YAML: {exc}") from exc
        spec = BatchFile(questions=[])
        if isinstance(data, dict):
            spec = BatchFile(questions=[], title=str(data.get("title") or ""),
                             mode=data.get("mode"), conversation=data.get("conversation"))
            data = data.get("questions")
        if not isinstance(data, list) or not all(isinstance(q, str) for q in data):
            raise click.BadParameter(f"{path}: expected a list of questions (strings)")
        spec.questions = [q.strip() for q in data if q.strip()]
    else:
        spec = BatchFile(questions=[line.strip() for line in text.splitlines()
                                    if line.strip() and not line.lstrip().startswith("#")])
    if not spec.questions:
        raise click.BadParameter(f"{path} holds no questions")
    return spec


class ProgressBar(LiveProgress):
    """A rich progress bar on a terminal; on anything else, a line every 10%."""

    def __init__(self, console: Console):
        super().__init__(console, Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[detail]}"), TimeElapsedColumn(), console=console))
        self.task = self.progress.add_task("questions", total=None, detail="")
        self.last_step = -1

    def update(self, view: dict[str, Any]) -> None:
        counts = view["counts"]
        detail = ", ".join(f"{n} {k}" for k, n in counts.items() if n and k != "queued")
        eta = f", about {view['eta_s']:.0f} s left" if view.get("eta_s") else ""
        self.progress.update(self.task, total=view["total"], completed=view["done"],
                             detail=detail + eta)
        step = int(view["progress"] * 10)
        if not self.live and step != self.last_step:
            self.last_step = step
            self.console.print(f"{view['done']}/{view['total']} questions done "
                               f"({detail or 'starting'})")


@click.command()
@click.argument("questions_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Where to write the report.")
@click.option("--format", "fmt", type=click.Choice(list(FORMATS)), default=None,
              help="Report format; default: the output file's extension, else html.")
@click.option("--title", default=None, help="Report title (overrides the file's).")
@click.option("--mode", type=click.Choice(["standard", "economy"]), default=None,
              help="economy: Message Batches API, half the price, slower.")
@click.option("--conversation", type=click.Choice(["separate", "shared"]), default=None,
              help="shared: one conversation, questions asked in order.")
@run_options
def report(questions_file: Path, output: Path, fmt: str | None, title: str | None,
           mode: str | None, conversation: str | None, local: bool, offline: bool,
           api_url: str, api_key: str | None, timeout: float) -> None:
    """Answer every question of QUESTIONS_FILE as one batch and write its report."""
    if offline and not local:
        raise click.UsageError("--offline runs the batch in this process: add --local")
    spec = load_questions(questions_file)
    fmt = fmt or (output.suffix.lower().lstrip(".") if output.suffix.lower().lstrip(".") in FORMATS
                  else "html")
    options = {"title": title if title is not None else spec.title,
               "mode": mode or spec.mode or "standard",
               "conversation": conversation or spec.conversation or "separate"}
    console = Console(stderr=True)
    console.print(f"{len(spec.questions)} questions from {questions_file}"
                  + (" (in-process)" if local else f" via {api_url}"))
    with ProgressBar(console) as bar:
        if local:
            from shared.config import get_settings
            from shared.reports import render
            from sunrise.offline import llm_settings

            with llm_settings(get_settings(), offline=offline, console=console) as settings:
                document, view = run_local(spec.questions, options, bar, settings)
            body = render(document, fmt)
        else:
            try:
                body, view = run_remote(api_url, api_key, spec.questions, options, fmt, bar,
                                        timeout)
            except (httpx.HTTPError, ApiError, NotSunriseApi) as exc:
                raise api_failure(exc, api_url) from exc
    output.write_bytes(body)
    usage = view["usage"]
    ratio = view.get("cache_hit_ratio")
    console.print(f"report written to {output} ({fmt}); {view['counts']['succeeded']} of "
                  f"{view['total']} answered; {fmt_usd(usage['cost_usd'])}; cache hit ratio "
                  f"{'n/a' if ratio is None else f'{ratio:.0%}'}")


def run_local(questions: list[str], options: dict, bar: ProgressBar, settings=None
              ) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run the batch in this process (under ``settings``, default: the environment's);
    returns its report document and last view."""
    from shared.config import get_settings
    from sunrise.local_batch import run_batch_local

    final: dict[str, Any] = {}

    def on_progress(view: dict[str, Any]) -> None:
        final.update(view)
        bar.update(view)

    document = run_batch_local(settings or get_settings(), questions, on_progress=on_progress,
                               **options)
    return document, final


def run_remote(api_url: str, api_key: str | None, questions: list[str], options: dict,
               fmt: str, bar: ProgressBar, timeout: float) -> tuple[bytes, dict[str, Any]]:
    """Run the batch through the API at ``api_url``; returns the report as ``fmt`` and the
    batch's last view. Raises httpx errors, ApiError for problem responses and NotSunriseApi
    when what answers at ``api_url`` is not a Sunrise API."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    with httpx.Client(base_url=api_url, headers=headers, timeout=60) as http:
        accepted = read_answer(http.post("/v1/batches", json={"questions": questions, **options}))
        batch_id = accepted["batch_id"]
        deadline = time.monotonic() + timeout
        while True:
            view = read_answer(http.get(f"/v1/batches/{batch_id}"))
            bar.update(view)
            if view["status"] == "completed":
                break
            if time.monotonic() > deadline:
                raise click.ClickException(f"batch {batch_id} still running after {timeout} s")
            time.sleep(POLL_S)
        resp = http.get(f"/v1/batches/{batch_id}/report", params={"format": fmt})
        if resp.status_code >= 400:
            read_answer(resp)
        return resp.content, view

