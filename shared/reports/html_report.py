"""The report as ONE self-contained HTML file: inline CSS, inline SVG charts, no
scripts and no external references, so it opens offline and can be mailed around."""
from __future__ import annotations

from html import escape
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

TABLE_ROWS_SHOWN = 100
CSS = """
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2433;
margin:0 auto;max-width:1040px;padding:24px}
h1{margin:0 0 4px}h2{margin:32px 0 8px;font-size:1.2em}
.meta,.muted{color:#667085;font-size:.9em}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:16px 0}
.card{border:1px solid #e4e7ec;border-radius:8px;padding:10px 14px;min-width:150px}
.card b{display:block;font-size:1.35em}
table{border-collapse:collapse;width:100%;font-size:.9em;margin:8px 0}
th,td{border-bottom:1px solid #e4e7ec;padding:4px 8px;text-align:left;vertical-align:top}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
tfoot td{font-weight:600}
.pill{display:inline-block;border-radius:10px;padding:0 8px;font-size:.8em;color:#fff}
.succeeded{background:#12b76a}.failed{background:#d92d20}.cancelled{background:#667085}
.queued,.running,.unfinished{background:#f79009}
section.question{border-top:1px solid #e4e7ec;margin-top:24px}
figure{margin:12px 0;overflow-x:auto}figcaption{font-weight:600;margin-bottom:4px}
figure svg{max-width:100%;height:auto}
.error{border-left:4px solid #d92d20;background:#fef3f2;padding:8px 12px}
.note{border-left:4px solid #12b76a;background:#ecfdf3;padding:8px 12px}
mark.unsupported{background:none;color:inherit;text-decoration:underline dotted #d92d20;
text-underline-offset:3px;cursor:help}
"""


def page_head(title: str, css: str = CSS) -> str:
    """The page up to ``<body>``: charset, viewport, the (escaped) title, inline CSS."""
    return ('<!doctype html>\n<html lang="en"><head><meta charset="utf-8">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{escape(title)}</title><style>{css}</style></head><body>")


def render_html(document: dict[str, Any]) -> str:
    """The whole report page; every model- or user-supplied string is escaped."""
    title = escape(document["title"])
    parts = [
        page_head(document["title"]),
        (f"<header><h1>{title}</h1><p class=\"meta\">Batch {escape(document['batch_id'])} · "
         f"{escape(document['mode'])} mode · {escape(document['conversation'])} conversations · "
         f"model {escape(', '.join(document['models']))} · generated "
         f"{escape(document['generated_at'] or '')}</p></header>"),
        _summary(document), _overview(document),
        *(_question(q) for q in document["questions"]),
        ("<footer class=\"muted\"><p>Charts were rendered server-side from their Vega-Lite "
         "specs into inline SVG; this file needs no network to be viewed.</p></footer>"),
        "</body></html>",
    ]
    return "\n".join(parts)


def _summary(document: dict[str, Any]) -> str:
    usage = document["usage"]
    cards = [
        ("Questions", fmt_int(document["total"]), counts_sentence(document)),
        ("Total cost", fmt_usd(usage["cost_usd"]),
         f"{fmt_int(usage['context_tokens'])} context tokens"),
        ("Output tokens", fmt_int(usage["output_tokens"]),
         f"{fmt_int(usage['input_tokens'])} uncached input"),
        ("Cache hit ratio", fmt_pct(document["cache_hit_ratio"]),
         (f"{fmt_int(usage['cache_read_tokens'])} read, "
          f"{fmt_int(usage['cache_creation_tokens'])} written")),
    ]
    numbers = document.get("numbers")
    if numbers and numbers["checked"]:
        cards.append(("Figures checked", fmt_int(numbers["checked"]),
                      f"{fmt_int(numbers['unsupported'])} {NOT_FOUND} "
                      f"({fmt_int(numbers['answers_flagged'])} answers)"))
    if document.get("economy"):
        economy = document["economy"]
        cards.append(("Economy saving", fmt_usd(economy["saving_usd"]),
                      f"{fmt_pct(economy['saving_ratio'])} below normal mode"))
    html = "".join(f'<div class="card"><span class="muted">{escape(name)}</span>'
                   f"<b>{escape(value)}</b><span class=\"muted\">{escape(sub)}</span></div>"
                   for name, value, sub in cards)
    return (f'<section class="summary"><div class="cards">{html}</div>'
            f'<p class="note">{escape(saving_sentence(document))}</p></section>')


def _overview(document: dict[str, Any]) -> str:
    head = ("<tr><th>#</th><th>Question</th><th>Status</th><th class=n>Input</th>"
            "<th class=n>Output</th><th class=n>Cache read</th><th class=n>Cache write</th>"
            "<th class=n>Cost</th></tr>")
    rows = []
    for q in document["questions"]:
        u = q["usage"]
        rows.append(
            f"<tr><td>{q['index'] + 1}</td><td><a href=\"#q{q['index'] + 1}\">"
            f"{escape(q['question'])}</a></td><td>{_pill(q['status'])}</td>"
            + "".join(f"<td class=n>{fmt_int(u[k])}</td>" for k in TOKEN_FIELDS)
            + f"<td class=n>{fmt_usd(u['cost_usd'])}</td></tr>")
    u = document["usage"]
    foot = ("<tr><td></td><td>Total</td><td></td>"
            + "".join(f"<td class=n>{fmt_int(u[k])}</td>" for k in TOKEN_FIELDS)
            + f"<td class=n>{fmt_usd(u['cost_usd'])}</td></tr>")
    return (f"<section><h2>Questions</h2><table class=\"overview\"><thead>{head}</thead>"
            f"<tbody>{''.join(rows)}</tbody><tfoot>{foot}</tfoot></table></section>")


def _question(q: dict[str, Any]) -> str:
    number = q["index"] + 1
    body = [(f'<section class="question" id="q{number}"><h2>{number}. '
             f"{escape(q['question'])} {_pill(q['status'])}</h2>")]
    if q["status"] == "succeeded":
        for kind, value in answer_segments(q):
            body.append(_text(value) if kind == "text" else _figure(value))
        if sentence := numbers_sentence(q.get("numbers")):
            body.append(f'<p class="muted">{escape(sentence)}</p>')
        if verified := verified_line(q.get("verified")):
            body.append(f'<p class="verified">✓ {escape(verified)}</p>')
    if q.get("error"):
        body.append(f'<p class="error"><b>{escape(q["status"].capitalize())}</b> '
                    f"({escape(q['error']['code'] or '')}): "
                    f"{escape(q['error']['message'] or '')}</p>")
    if as_of := data_as_of_line(q.get("data_as_of")):
        body.append(f'<p class="muted data-as-of">{escape(as_of)}</p>')
    body.append(f'<p class="muted">{escape(usage_line(q["usage"]))}</p></section>')
    return "".join(body)


def _text(text: str) -> str:
    paragraphs = [p.strip() for p in text.split("\n\n") if p.strip()]
    return "".join(f"<p>{_marked(escape(p)).replace(chr(10), '<br>')}</p>" for p in paragraphs)


def _marked(html: str) -> str:
    return (html.replace(MARK_OPEN, f'<mark class="unsupported" title="{NOT_FOUND}">')
            .replace(MARK_CLOSE, "</mark>"))


def _figure(chart: dict[str, Any]) -> str:
    title = escape(chart.get("title") or "")
    if chart.get("svg"):
        # The SVG comes from vl-convert, which escapes every data value it writes.
        # The chart draws its own title; the label is for screen readers.
        label = f'<svg role="img" aria-label="{title}"'
        return f"<figure>{chart['svg'].replace('<svg', label, 1)}</figure>"
    note = (f'<p class="muted">The chart could not be drawn ({escape(chart["svg_error"])}); '
            "its data:</p>") if chart.get("svg_error") else ""
    return f"<figure><figcaption>{title}</figcaption>{note}{_data_table(chart)}</figure>"


def _data_table(chart: dict[str, Any]) -> str:
    columns = chart.get("columns") or []
    data = chart.get("data") or []
    head = "".join(f"<th>{escape(str(c))}</th>" for c in columns)
    rows = "".join("<tr>" + "".join(f"<td>{escape(_cell(row.get(c)))}</td>" for c in columns)
                   + "</tr>" for row in data[:TABLE_ROWS_SHOWN])
    more = (f'<p class="muted">First {TABLE_ROWS_SHOWN} of {len(data)} rows.</p>'
            if len(data) > TABLE_ROWS_SHOWN else "")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>{more}"


def _cell(value: Any) -> str:
    return "" if value is None else str(value)


def _pill(status: str) -> str:
    return f'<span class="pill {escape(status)}">{escape(status)}</span>'
