"""Batch reports: the document (``document``), its charts as SVG (``chart_svg``) and
its four renderings. :func:`render` is the one entry point for the API and the CLI."""
from __future__ import annotations

import json
from typing import Any

from shared.reports.csv_report import render_chart_csv, render_csv
from shared.reports.html_report import render_html
from shared.reports.markdown_report import render_markdown

MEDIA_TYPES = {
    "html": "text/html; charset=utf-8",
    "md": "text/markdown; charset=utf-8",
    "json": "application/json",
    "csv": "text/csv; charset=utf-8",
}


def render(document: dict[str, Any], fmt: str, *, question: int | None = None,
           chart: int | None = None) -> bytes:
    """The report as ``fmt`` (html|md|json|csv). JSON leaves the rendered SVGs out: it
    carries each chart's rows and Vega-Lite spec instead. With ``question`` and
    ``chart``, CSV is that one chart's rows (NotFound if it does not exist)."""
    if fmt == "html":
        return render_html(document).encode()
    if fmt == "md":
        return render_markdown(document).encode()
    if fmt == "csv":
        if question is not None and chart is not None:
            return render_chart_csv(document, question, chart).encode()
        return render_csv(document).encode()
    if fmt == "json":
        return json.dumps(_without_svg(document), indent=1, default=str).encode()
    raise ValueError(f"unknown report format {fmt!r}")


def _without_svg(document: dict[str, Any]) -> dict[str, Any]:
    questions = [{**q, "charts": [{k: v for k, v in c.items() if k != "svg"}
                                  for c in q.get("charts") or []]}
                 for q in document["questions"]]
    return {**document, "questions": questions}
