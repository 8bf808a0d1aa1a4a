"""Human-friendly terminal output for the CLI (rich)."""
from __future__ import annotations

import re
from typing import Any, Self

from rich.console import Console
from rich.markup import escape
from rich.progress import Progress
from rich.table import Table

from shared.reports.formatting import fmt_usd

CHART_TOKEN = re.compile(r"\{\{chart:(\d+)\}\}")


def tokens_phrase(usage: dict[str, Any]) -> str:
    """A call's or a job's tokens in a few words."""
    return (f"{usage['input_tokens']} in, {usage['cache_read_tokens']} cache read, "
            f"{usage['cache_creation_tokens']} cache write, {usage['output_tokens']} out")


class LiveProgress:
    """A rich ``Progress`` drawn while in the ``with`` block, on a terminal only
    (``live``); subclasses print plain lines otherwise."""

    def __init__(self, console: Console, progress: Progress):
        self.console = console
        self.progress = progress
        self.live = console.is_terminal

    def __enter__(self) -> Self:
        if self.live:
            self.progress.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.live:
            self.progress.stop()


class ProgressPrinter:
    """An event sink that narrates a job's progress on stderr."""

    def __init__(self, console: Console | None = None):
        self.console = console or Console(stderr=True)

    def publish(self, object_id: str, event: str, data: dict[str, Any]) -> None:
        if event == "llm_call":
            self.console.print(
                f"[dim]model round {data['round']}: {tokens_phrase(data)} "
                f"({data['stop_reason']}, {data['ms']} ms)[/dim]")
        elif event == "thinking":
            self.console.print(f"[dim italic]thinking: {escape(data['text'])}[/dim italic]",
                               highlight=False)
        elif event == "tool_call":
            status = f"error: {data['error']}" if data.get("error") else f"{data['rows']} rows"
            cached = " (cached)" if data.get("cached") else ""
            self.console.print(f"[cyan]sql[/cyan] {data['sql']}\n  → {status}{cached}")


def print_job(job: dict[str, Any], console: Console | None = None) -> None:
    """The answer, its charts (as tables) and the usage line."""
    console = console or Console()
    if job["status"] != "succeeded":
        err = job.get("error") or {}
        console.print(f"[red]{job['status']}[/red]: {err.get('code')}: {err.get('message')}")
        return
    result = job["result"]
    charts = result["charts"]

    def label(match: re.Match) -> str:
        n = int(match.group(1))
        return f"[chart {n}: {charts[n]['title']}]" if n < len(charts) else ""

    console.print(CHART_TOKEN.sub(label, result["answer_text"]), markup=False)
    for i, chart in enumerate(result["charts"]):
        table = Table(title=f"chart {i}: {chart['title']} ({chart['type']})")
        for col in chart["columns"]:
            table.add_column(col)
        for row in chart["data"][:15]:
            table.add_row(*(str(row.get(c, "")) for c in chart["columns"]))
        if len(chart["data"]) > 15:
            table.caption = f"{len(chart['data'])} rows in all"
        console.print(table)
    u = job["usage"]
    console.print(
        f"[dim]{u['tool_rounds']} tool rounds, {u['sql_executed']} queries "
        f"({u['sql_cache_hits']} cached); tokens: {tokens_phrase(u)}; "
        f"{fmt_usd(u['cost_usd'])}; parse path "
        f"{result['parse_path']}[/dim]")
