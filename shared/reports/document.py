"""The report document: one JSON-able dict holding everything a batch produced.

It is built once, when every job of the batch has ended, from the job rows alone
(question, status, answer, charts with their rows and Vega-Lite specs, error,
usage), so a failed question is in it with its error and never stops it from
being built. The renderers (HTML, Markdown, CSV, JSON) read only this document.
"""
from __future__ import annotations

import json
import re
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from decimal import Decimal
from typing import Any

from shared.claude_models import ModelPrice
from shared.models import Batch, Job, iso, utcnow
from shared.usage_figures import (
    JOB_FIELDS,
    TOKEN_FIELDS,
    add_costs,
    cache_hit_ratio,
    token_cost,
    usage_view,
)

CHART_TOKEN = re.compile(r"\{\{\s*chart\s*:\s*(\d+)\s*\}\}")


def standard_cost(job: Job, price: ModelPrice | None) -> Decimal | None:
    """What the job's tokens cost at the normal (non-batch, 5-minute cache) prices;
    None for a model without a known price."""
    if price is None:
        return None
    return token_cost(price, **{name: getattr(job, name) or 0 for name in TOKEN_FIELDS})


def build_document(batch: Batch, jobs: Sequence[Job],
                   price_for: Callable[[str], ModelPrice | None],
                   queries: Mapping[str, list[dict[str, Any]]] | None = None) -> dict[str, Any]:
    """The report of ``batch`` from its ``jobs`` (any order; sorted by batch index) and
    the ``queries`` each answer ran (by job id, see ``shared.batches.answer_queries``).

    Pure: reads the rows, writes nothing. Charts carry no SVG yet (see chart_svg).
    """
    queries = queries or {}
    numbers = {"checked": 0, "unsupported": 0, "answers_flagged": 0}
    questions = []
    totals: dict[str, Any] = dict.fromkeys(JOB_FIELDS, 0)
    totals["cost_usd"] = Decimal(0)
    standard_total: Decimal | None = Decimal(0)
    counts = {"succeeded": 0, "failed": 0, "cancelled": 0, "unfinished": 0}
    for job in sorted(jobs, key=lambda j: j.batch_index or 0):
        usage = usage_view(job)
        for name in JOB_FIELDS:
            if name != "cost_usd":
                totals[name] += usage[name]
        totals["cost_usd"] = add_costs(totals["cost_usd"], job.cost_usd)
        standard = standard_cost(job, price_for(job.model))
        standard_total = add_costs(standard_total, standard)
        counts[job.status if job.status in counts else "unfinished"] += 1
        if job.numbers:
            numbers["checked"] += job.numbers.get("checked") or 0
            numbers["unsupported"] += len(job.numbers.get("unsupported") or [])
            numbers["answers_flagged"] += bool(job.numbers.get("unsupported"))
        questions.append({
            "index": job.batch_index,
            "job_id": job.id,
            "question": job.message,
            "status": job.status,
            "model": job.model,
            "answer_text": job.answer_text,
            "charts": list(job.charts or []),
            "parse_path": job.parse_path,
            "truncated": bool(job.truncated),
            "numbers": job.numbers,
            "verified": job.verified,
            "queries": queries.get(job.id, []),
            "error": ({"code": job.error_code, "message": job.error_message}
                      if job.error_code else None),
            "usage": usage,
            "standard_cost_usd": _usd(standard),
            "started_at": iso(job.started_at),
            "finished_at": iso(job.finished_at),
            "data_as_of": iso(job.data_as_of),
        })
    cost = totals["cost_usd"]
    totals["cost_usd"] = _usd(cost)
    economy = None
    if batch.mode == "economy":
        saving = None if cost is None or standard_total is None else standard_total - cost
        economy = {
            "cost_usd": _usd(cost),
            "standard_cost_usd": _usd(standard_total),
            "saving_usd": _usd(saving),
            "saving_ratio": (None if saving is None else
                             round(float(saving / standard_total), 4) if standard_total else 0.0),
        }
    return {
        "batch_id": batch.id,
        "title": batch.title or f"Batch {batch.id}",
        "mode": batch.mode,
        "conversation": batch.conversation_mode,
        "created_at": iso(batch.created_at),
        "generated_at": iso(utcnow()),
        "models": sorted({q["model"] for q in questions}),
        "total": len(questions),
        "counts": counts,
        "usage": totals,
        "cache_hit_ratio": cache_hit_ratio(totals, digits=4),
        "standard_cost_usd": _usd(standard_total),
        "economy": economy,
        "numbers": numbers,
        "questions": questions,
    }


def _usd(value: Decimal | None) -> float | None:
    return None if value is None else float(round(value, 8))


def answer_segments(question: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """The answer as ``("text", str)`` and ``("chart", chart)`` pieces in reading order.

    A ``{{chart:N}}`` token becomes its chart; charts no token placed follow the text,
    so none is lost; tokens naming no chart are dropped. Unsupported figures in the
    text come between ``MARK_OPEN`` and ``MARK_CLOSE`` (see :func:`mark_unsupported`).
    """
    charts = question.get("charts") or []
    placed: set[int] = set()
    text = mark_unsupported(question.get("answer_text") or "", question.get("numbers"))
    position = 0
    for match in CHART_TOKEN.finditer(text):
        if match.start() > position:
            yield "text", text[position:match.start()]
        index = int(match.group(1))
        if 0 <= index < len(charts) and index not in placed:
            placed.add(index)
            yield "chart", charts[index]
        position = match.end()
    if position < len(text):
        yield "text", text[position:]
    for index, chart in enumerate(charts):
        if index not in placed:
            yield "chart", chart


MARK_OPEN, MARK_CLOSE = "\ue000", "\ue001"
NOT_FOUND = "not found in any query result"


def mark_unsupported(text: str, numbers: dict[str, Any] | None) -> str:
    """``text`` with each unsupported figure of ``numbers`` (the faithfulness check)
    between ``MARK_OPEN`` and ``MARK_CLOSE``, for a renderer to style. A figure whose
    position no longer matches the text is left unmarked."""
    figures = sorted((numbers or {}).get("unsupported") or [],
                     key=lambda f: f["position"], reverse=True)
    for figure in figures:  # from the end, so earlier positions stay valid
        start, written = figure["position"], figure["text"]
        if text[start:start + len(written)] == written:
            text = (text[:start] + MARK_OPEN + written + MARK_CLOSE
                    + text[start + len(written):])
    return text


def numbers_sentence(numbers: dict[str, Any] | None) -> str:
    """One line about an answer's faithfulness check (empty when it has none)."""
    if not numbers:
        return ""
    bad = [f["text"] for f in numbers.get("unsupported") or []]
    checked = numbers.get("checked") or 0
    if not bad:
        return f"Every figure ({checked}) checked against the query results." if checked else ""
    return (f"{len(bad)} of {checked} figures {NOT_FOUND}: {', '.join(bad)}.")


def pack(document: dict[str, Any]) -> bytes:
    """The document as stored in ``batches.report``: zlib-compressed compact JSON."""
    return zlib.compress(json.dumps(document, separators=(",", ":"), default=str).encode(), 6)


def unpack(blob: bytes) -> dict[str, Any]:
    return json.loads(zlib.decompress(blob))
