"""The report as Markdown: summary, per-question table with a total row, answers with
their charts as embedded SVG images (data URIs), so the file stands alone."""
from __future__ import annotations

import base64
from typing import Any

from shared.reports.document import (
    MARK_CLOSE,
    MARK_OPEN,
    NOT_FOUND,
    answer_segments,
    numbers_sentence,
)
from shared.reports.formatting import (
    counts_sentence,
    data_as_of_line,
    fmt_int,
    fmt_pct,
    fmt_usd,
    saving_sentence,
    usage_line,
    verified_line,
)
from shared.usage_figures import TOKEN_FIELDS

TABLE_ROWS_SHOWN = 50


def render_markdown(document: dict[str, Any]) -> str:
    usage = document["usage"]
    lines = [
        f"# {_inline(document['title'])}", "",
        (f"Batch `{document['batch_id']}` · {document['mode']} mode · "
         f"{document['conversation']} conversations · model {', '.join(document['models'])} · "
         f"generated {document['generated_at']}"), "",
        f"- {counts_sentence(document)}",
        f"- Total cost: **{fmt_usd(usage['cost_usd'])}**",
        (f"- Cache hit ratio: **{fmt_pct(document['cache_hit_ratio'])}** "
         f"({fmt_int(usage['cache_read_tokens'])} tokens read from the prompt cache, "
         f"{fmt_int(usage['cache_creation_tokens'])} written)"),
        f"- {saving_sentence(document)}",
        *_numbers_line(document.get("numbers")), "",
        "| # | Question | Status | Input | Output | Cache read | Cache write | Cost |",
        "|---:|---|---|---:|---:|---:|---:|---:|",
    ]
    for q in document["questions"]:
        u = q["usage"]
        lines.append(f"| {q['index'] + 1} | {_cell(q['question'])} | {q['status']} | "
                     + " | ".join(fmt_int(u[k]) for k in TOKEN_FIELDS)
                     + f" | {fmt_usd(u['cost_usd'])} |")
    totals = " | ".join(f"**{fmt_int(usage[k])}**" for k in TOKEN_FIELDS)
    lines.append(f"| | **Total** | | {totals} | **{fmt_usd(usage['cost_usd'])}** |")
    for q in document["questions"]:
        lines += ["", f"## {q['index'] + 1}. {_inline(q['question'])}", ""]
        if q["status"] == "succeeded":
            for kind, value in answer_segments(q):
                lines += [_marked(_escape(value)).strip(), ""] if kind == "text" else _chart(value)
            if sentence := numbers_sentence(q.get("numbers")):
                lines += [f"_{_inline(sentence)}_", ""]
            if verified := verified_line(q.get("verified")):
                lines += [f"**✓** _{_inline(verified)}_", ""]
        if q.get("error"):
            error = q["error"]
            lines += [(f"> **{q['status'].capitalize()}** (`{error['code']}`): "
                       f"{_inline(error['message'] or '')}"), ""]
        if as_of := data_as_of_line(q.get("data_as_of")):
            lines += [f"_{as_of}_", ""]
        lines.append(f"_{usage_line(q['usage'])}_")
    return "\n".join(lines) + "\n"


def _numbers_line(numbers: dict[str, Any] | None) -> list[str]:
    if not numbers or not numbers["checked"]:
        return []
    return [f"- Figures checked against the query results: **{fmt_int(numbers['checked'])}**, "
            f"{fmt_int(numbers['unsupported'])} {NOT_FOUND} "
            f"({fmt_int(numbers['answers_flagged'])} answers)"]


def _chart(chart: dict[str, Any]) -> list[str]:
    title = _inline(chart.get("title") or "chart")
    if chart.get("svg"):
        data = base64.b64encode(chart["svg"].encode()).decode()
        return [f"![{title}](data:image/svg+xml;base64,{data})", ""]
    columns = chart.get("columns") or []
    rows = chart.get("data") or []
    table = [f"**{title}**", "", "| " + " | ".join(_cell(str(c)) for c in columns) + " |",
             "|" + "---|" * len(columns)]
    table += ["| " + " | ".join(_cell("" if r.get(c) is None else str(r.get(c))) for c in columns)
              + " |" for r in rows[:TABLE_ROWS_SHOWN]]
    if len(rows) > TABLE_ROWS_SHOWN:
        table.append(f"\n_First {TABLE_ROWS_SHOWN} of {len(rows)} rows._")
    return [*table, ""]


def _marked(text: str) -> str:
    # An unsupported figure keeps its text and gains a warning sign after it.
    return text.replace(MARK_OPEN, "").replace(MARK_CLOSE, "\u00a0\u26a0")


def _escape(text: str) -> str:
    # Model text is shown as text: raw HTML in it must not become markup in a viewer.
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _inline(text: str) -> str:
    return " ".join(_escape(text).split())


def _cell(text: str) -> str:
    return _inline(text).replace("|", "\\|")
