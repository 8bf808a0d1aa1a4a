"""Batch reports: the document (``document``), its charts as SVG (``chart_svg``) and its
renderings, one module each, listed in ``FORMATS``: the API, its spec and the CLI offer
exactly these. Adding a format is its module plus one line here.
"""
from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

from shared.reports.csv_report import render_chart_csv, render_csv
from shared.reports.html_report import render_html
from shared.reports.markdown_report import render_markdown


def render_json(document: dict[str, Any]) -> str:
    """The document as JSON, without the rendered SVGs: each chart carries its rows and
    Vega-Lite spec instead."""
    questions = [{**q, "charts": [{k: v for k, v in c.items() if k != "svg"}
                                  for c in q.get("charts") or []]}
                 for q in document["questions"]]
    return json.dumps({**document, "questions": questions}, indent=1, default=str)


@dataclasses.dataclass(frozen=True)
class ReportFormat:
    media_type: str
    render: Callable[[dict[str, Any]], str]

    @property
    def content_type(self) -> str:
        return self.media_type.split(";")[0]


FORMATS: dict[str, ReportFormat] = {
    "html": ReportFormat("text/html; charset=utf-8", render_html),
    "md": ReportFormat("text/markdown; charset=utf-8", render_markdown),
    "json": ReportFormat("application/json", render_json),
    "csv": ReportFormat("text/csv; charset=utf-8", render_csv),
}


def render(document: dict[str, Any], fmt: str, *, question: int | None = None,
           chart: int | None = None) -> bytes:
    """The report as ``fmt`` (a key of ``FORMATS``; KeyError otherwise). With
    ``question`` and ``chart``, CSV is that one chart's rows (NotFound if it does not
    exist)."""
    if fmt == "csv" and question is not None and chart is not None:
        return render_chart_csv(document, question, chart).encode()
    return FORMATS[fmt].render(document).encode()
