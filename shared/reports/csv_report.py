"""The query results behind the report's charts as CSV.

Every chart of every question in one long ("tidy") file: one line per value, so
charts of different shapes share a header. One chart alone comes out wide: its
own columns, one line per row. Every cell, header included, goes through
``csv_cells.safe_row`` (no spreadsheet formulas).
"""
from __future__ import annotations

import io
from typing import Any

from shared.errors import NotFound
from shared.reports.csv_cells import report_writer, safe_row

LONG_HEADER = ("question_index", "job_id", "question", "chart_index", "chart_title",
               "chart_type", "row", "column", "value", "data_as_of")


def render_csv(document: dict[str, Any]) -> str:
    """All charts' rows in long form (question_index and chart_index count from 1), each
    with its question's ``data_as_of``."""
    out = io.StringIO()
    writer = report_writer(out)
    writer.writerow(LONG_HEADER)
    for q in document["questions"]:
        for n, chart in enumerate(q.get("charts") or [], start=1):
            for r, row in enumerate(chart.get("data") or [], start=1):
                for column in chart.get("columns") or []:
                    writer.writerow(safe_row((q["index"] + 1, q["job_id"], q["question"], n,
                                              chart.get("title", ""), chart.get("type", ""),
                                              r, column, row.get(column),
                                              q.get("data_as_of") or "")))
    return out.getvalue()


def render_chart_csv(document: dict[str, Any], question: int, chart: int) -> str:
    """One chart's rows, wide. ``question`` and ``chart`` count from 1; NotFound if absent."""
    questions = document["questions"]
    if not 1 <= question <= len(questions):
        raise NotFound(f"The report has no question {question}.")
    charts = questions[question - 1].get("charts") or []
    if not 1 <= chart <= len(charts):
        raise NotFound(f"Question {question} has no chart {chart}.")
    selected = charts[chart - 1]
    columns = selected.get("columns") or []
    out = io.StringIO()
    writer = report_writer(out)
    writer.writerow(safe_row(columns))
    for row in selected.get("data") or []:
        writer.writerow(safe_row(row.get(c) for c in columns))
    return out.getvalue()
