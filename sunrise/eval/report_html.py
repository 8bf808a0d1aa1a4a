"""The evaluation report as ONE self-contained HTML file (inline CSS, no scripts, no
external references), like the batch reports: the run's figures, the comparison with
an earlier run when there is one, and every question with the gold and Sunrise's SQL
side by side and the first rows that differ."""
from __future__ import annotations

from html import escape
from typing import Any

from shared.reports.document import CHART_TOKEN, MARK_CLOSE, MARK_OPEN, NOT_FOUND, mark_unsupported
from shared.reports.formatting import fmt_int, fmt_pct, fmt_usd, usage_line
from shared.reports.html_report import CSS as REPORT_CSS
from shared.reports.html_report import page_head
from shared.usage_figures import TOKEN_FIELDS, prompt_tokens

CSS = REPORT_CSS + """
.grid{display:grid;grid-template-columns:1fr 1fr;gap:12px}
pre{background:#f6f8fa;border-radius:6px;padding:8px 10px;white-space:pre-wrap;font-size:.85em;margin:4px 0}
.ok{color:#067647;font-weight:600}.bad{color:#b42318;font-weight:600}.na{color:#667085}
.offline{border-left:4px solid #f79009;background:#fffaeb;padding:8px 12px}
td.n,th.n{text-align:right;white-space:nowrap}
.delta-good{color:#067647}.delta-bad{color:#b42318}
"""


def render_eval_html(report: dict[str, Any]) -> str:
    """The whole page; every string from a gold file, a model or a database is escaped."""
    title = escape(report["title"])
    parts = [
        page_head(f"Evaluation: {report['title']}", CSS),
        f"<header><h1>Evaluation: {title}</h1><p class=\"meta\">{escape(_meta(report))}</p>"
        "</header>",
        _offline_note(report), _summary(report), _tiers(report), _comparison(report),
        _overview(report), *(_question(n, q) for n, q in enumerate(report["questions"], 1)),
        "<footer class=\"muted\"><p>Execution accuracy compares the result of the query an "
        "answer relies on (its first chart's, else its last) with the gold query's: rows as a "
        "multiset (in order when the gold query orders), column order and names ignored, "
        "numbers equal at the coarser precision of the two (at least two decimals) or "
        "within the question's tolerance. Answer accuracy: every gold value appears in the "
        "answer text or its charts.</p></footer>",
        "</body></html>",
    ]
    return "\n".join(p for p in parts if p)


def _meta(report: dict[str, Any]) -> str:
    where = "in-process" if report["mode"] == "local" else f"via {report.get('api')}"
    dataset = f" · dataset {report['dataset_id']}" if report.get("dataset_id") else ""
    return (f"{len(report['questions'])} questions from {report['gold_file']} · answered "
            f"{where} · model {', '.join(report.get('models') or ['?'])}{dataset} · gold SQL "
            f"on {report['database']} · generated {report['generated_at']}")


def _offline_note(report: dict[str, Any]) -> str:
    if not report.get("offline_model"):
        return ""
    return ('<p class="offline">Answered by Sunrise\'s offline model, a test double that '
            "turns simple questions into SQL; it is not Claude. These figures measure the "
            "test double and the pipeline around it. Set ANTHROPIC_API_KEY to measure Claude."
            "</p>")


def _summary(report: dict[str, Any]) -> str:
    s = report["summary"]
    tokens = s["tokens"]
    cards = [
        ("Execution accuracy", fmt_pct(s["execution_accuracy"]),
         f"{s['execution_correct']} of {s['scored']} questions"),
        ("Answer accuracy", fmt_pct(s["answer_accuracy"]),
         f"{s['answer_correct']} of {s['scored']} show the gold values"),
        ("Faithfulness", fmt_pct(s["faithfulness"]),
         f"{s['faithful_answers']} answers with every figure supported; "
         f"{fmt_int(s['figures_unsupported'])} of {fmt_int(s['figures_checked'])} figures "
         f"{NOT_FOUND}"),
        ("Cost", fmt_usd(s["cost_usd"]), f"{fmt_usd(s['cost_per_question_usd'])} per question"),
        ("Latency", f"{_ms(s['latency_ms']['p50'])} p50",
         f"{_ms(s['latency_ms']['p95'])} p95 (worker time per question)"),
        ("Tokens", fmt_int(prompt_tokens(tokens)),
         f"{fmt_int(tokens['output_tokens'])} output; {fmt_int(tokens['cache_read_tokens'])} "
         "read from the prompt cache"),
        ("Rounds", f"{s['rounds']['mean']:g}", f"tool rounds per question, at most "
                                               f"{s['rounds']['max']}"),
        ("Answered", f"{s['answered']} of {s['questions']}", _counts(s["failure_codes"])
         or "no failures"),
    ]
    html = "".join(f'<div class="card"><span class="muted">{escape(name)}</span><b>'
                   f"{escape(value)}</b><span class=\"muted\">{escape(sub)}</span></div>"
                   for name, value, sub in cards)
    paths = _counts(s["parse_paths"]) or "none"
    return (f'<section class="summary"><div class="cards">{html}</div>'
            f'<p class="muted">Answer parse paths: {escape(paths)}.</p></section>')


def _tiers(report: dict[str, Any]) -> str:
    rows = "".join(
        f"<tr><td>{escape(tier)}</td><td class=n>{t['questions']}</td>"
        f"<td class=n>{fmt_pct(t['execution_accuracy'])} ({t['execution_correct']})</td>"
        f"<td class=n>{fmt_pct(t['answer_accuracy'])} ({t['answer_correct']})</td></tr>"
        for tier, t in report["summary"]["by_tier"].items())
    return ("<section><h2>By tier</h2><table><thead><tr><th>Tier</th><th class=n>Questions"
            "</th><th class=n>Execution accuracy</th><th class=n>Answer accuracy</th></tr>"
            f"</thead><tbody>{rows}</tbody></table></section>")


def _comparison(report: dict[str, Any]) -> str:
    comparison = report.get("comparison")
    if not comparison:
        return ""
    earlier = comparison["earlier"]
    rows = "".join(
        f"<tr><td>{escape(m['label'])}</td><td class=n>{_value(m['before'], m['kind'])}</td>"
        f"<td class=n>{_value(m['after'], m['kind'])}</td>{_delta(m)}</tr>"
        for m in comparison["metrics"])
    changed = "".join(
        f"<li>{escape(c['id'])} ({escape(c['tier'])}): execution {_verdict(c['execution'][0])} → "
        f"{_verdict(c['execution'][1])}, answer {_verdict(c['answer'][0])} → "
        f"{_verdict(c['answer'][1])} — {escape(c['question'])}</li>"
        for c in comparison["changed"])
    unmatched = ""
    if comparison["only_earlier"] or comparison["only_current"]:
        unmatched = (f"<p class=\"muted\">Only in the earlier run: "
                     f"{escape(', '.join(comparison['only_earlier']) or 'none')}; only in this "
                     f"run: {escape(', '.join(comparison['only_current']) or 'none')}.</p>")
    return (f"<section><h2>Compared with {escape(earlier.get('title') or 'the earlier run')}"
            f"</h2><p class=\"muted\">Earlier run: {escape(str(earlier.get('generated_at')))}, "
            f"model {escape(', '.join(earlier.get('models') or ['?']))}, "
            f"{escape(str(earlier.get('mode')))}. {comparison['fixed']} questions fixed, "
            f"{comparison['broken']} broken.</p><table><thead><tr><th>Figure</th>"
            "<th class=n>Earlier</th><th class=n>This run</th><th class=n>Change</th></tr>"
            f"</thead><tbody>{rows}</tbody></table>"
            f"{f'<ul>{changed}</ul>' if changed else '<p>No question changed verdict.</p>'}"
            f"{unmatched}</section>")


def _overview(report: dict[str, Any]) -> str:
    rows = []
    for n, q in enumerate(report["questions"], 1):
        numbers = q.get("numbers") or {}
        figures = (f"{len(numbers.get('unsupported') or [])} / {numbers.get('checked', 0)}"
                   if numbers else "–")
        rows.append(
            f"<tr><td>{n}</td><td><a href=\"#q{n}\">{escape(q['id'])}</a></td>"
            f"<td>{escape(q['tier'])}</td><td>{escape(q['question'])}</td>"
            f"<td>{_verdict(q['execution']['correct'])}</td>"
            f"<td>{_verdict(q['answer']['correct'] if q['scored'] else None)} "
            f"<span class=muted>{q['answer']['found']}/{q['answer']['total']}</span></td>"
            f"<td class=n>{figures}</td><td class=n>{fmt_usd(q['usage'].get('cost_usd'))}</td>"
            f"<td class=n>{_ms(q['usage'].get('wall_ms'))}</td></tr>")
    return ("<section><h2>Questions</h2><table><thead><tr><th>#</th><th>Id</th><th>Tier</th>"
            "<th>Question</th><th>Execution</th><th>Answer</th><th class=n>Unsupported / "
            "figures</th><th class=n>Cost</th><th class=n>Time</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></section>")


def _question(number: int, q: dict[str, Any]) -> str:
    gold, mine, execution = q["gold"], q["sunrise"], q["execution"]
    parts = [f'<section class="question" id="q{number}"><h2>{number}. {escape(q["question"])}'
             f"</h2><p class=\"muted\">{escape(q['id'])} · {escape(q['tier'])} · "
             f"{escape(q['status'] or '')}"
             f"{' · ' + escape(q['notes']) if q.get('notes') else ''}</p>",
             f"<p>Execution: {_verdict(execution['correct'])} {escape(execution['reason'])}</p>"]
    gold_source = gold["sql"] or f"values: {gold['values']}"
    parts.append(
        f'<div class="grid"><div><b>Gold</b>{" (ordered)" if gold["ordered"] else ""}'
        f"<pre>{escape(gold_source)}</pre>{_rows(gold)}</div>"
        f"<div><b>Sunrise</b>{_query_label(mine)}<pre>{escape(mine['sql'] or 'no query')}</pre>"
        f"{_rows(mine)}</div></div>")
    if execution.get("row_index") is not None:
        parts.append(
            f"<p>First differing rows (row {execution['row_index'] + 1}"
            f"{'' if gold['ordered'] else ', both sorted'}): gold "
            f"<code>{escape(_row(execution.get('gold_row')))}</code>, Sunrise "
            f"<code>{escape(_row(execution.get('sunrise_row')))}</code></p>")
    answer = q["answer"]
    missing = (f"; missing: {escape(', '.join(map(_cell, answer['missing'])))}"
               if answer["missing"] else "")
    parts.append(f"<p>Answer: {_verdict(answer['correct'] if q['scored'] else None)} "
                 f"{answer['found']} of {answer['total']} gold values shown{missing}</p>")
    if mine.get("answer_text"):
        parts.append(_answer_text(mine["answer_text"], q.get("numbers")))
    if q.get("error"):
        parts.append(f'<p class="error">{escape(q["error"].get("code") or "")}: '
                     f"{escape(q['error'].get('message') or '')}</p>")
    if q["usage"]:
        parts.append(f'<p class="muted">{escape(usage_line(_usage(q["usage"])))}; '
                     f"{escape(q.get('parse_path') or '–')} parse</p>")
    return "".join(parts) + "</section>"


def _answer_text(text: str, numbers: dict[str, Any] | None) -> str:
    marked = escape(mark_unsupported(text, numbers))
    marked = CHART_TOKEN.sub(lambda m: f"[chart {int(m.group(1)) + 1}]", marked)
    marked = (marked.replace(MARK_OPEN, f'<mark class="unsupported" title="{NOT_FOUND}">')
              .replace(MARK_CLOSE, "</mark>"))
    return f"<blockquote>{marked.replace(chr(10), '<br>')}</blockquote>"


def _rows(view: dict[str, Any]) -> str:
    if view.get("error"):
        return f'<p class="error">{escape(view["error"])}</p>'
    if not view.get("columns"):
        return ""
    head = "".join(f"<th>{escape(str(c))}</th>" for c in view["columns"])
    body = "".join("<tr>" + "".join(f"<td>{escape(_cell(v))}</td>" for v in row) + "</tr>"
                   for row in view["rows"])
    more = (f'<p class="muted">First {len(view["rows"])} of {view["row_count"]} rows.</p>'
            if view["row_count"] > len(view["rows"]) else "")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}"


def _query_label(mine: dict[str, Any]) -> str:
    if mine.get("query_id") is None:
        return ""
    return f" (query {mine['query_id']} of {mine['queries']}, {mine['charts']} chart(s))"


def _usage(usage: dict[str, Any]) -> dict[str, Any]:
    keys = (*TOKEN_FIELDS, "cost_usd", "tool_rounds", "sql_executed")
    return {key: usage.get(key) or 0 for key in keys}


def _verdict(value: bool | None) -> str:
    if value is None:
        return '<span class="na">–</span>'
    return '<span class="ok">✓</span>' if value else '<span class="bad">✗</span>'


def _value(value: float | None, kind: str) -> str:
    if value is None:
        return "–"
    if kind == "ratio":
        return fmt_pct(value)
    if kind == "usd":
        return fmt_usd(value)
    if kind == "ms":
        return _ms(value)
    return f"{value:,.2f}".rstrip("0").rstrip(".")


def _delta(metric: dict[str, Any]) -> str:
    delta = metric["delta"]
    if delta is None:
        return "<td class=n>–</td>"
    if metric["kind"] == "ratio":
        text = f"{delta * 100:+.1f} points"
    elif metric["kind"] == "usd":
        text = f"{'+' if delta >= 0 else '-'}{fmt_usd(abs(delta))}"
    else:
        text = f"{delta:+,.2f}".rstrip("0").rstrip(".")
    better = delta > 0 if metric["kind"] == "ratio" else delta < 0
    style = "" if delta == 0 else (' class="n delta-good"' if better else ' class="n delta-bad"')
    return f"<td{style or ' class=n'}>{escape(text)}</td>"


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {n}" for name, n in sorted(counts.items(), key=lambda kv: -kv[1]))


def _ms(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value / 1000:.1f} s" if value >= 1000 else f"{value:.0f} ms"


def _row(row: Any) -> str:
    return "(none)" if row is None else ", ".join(_cell(v) for v in row)


def _cell(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)
