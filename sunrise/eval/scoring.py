"""Scoring one gold question against Sunrise's answer, and the run as a whole.

The answer is one question of a batch report document (``shared.reports.document``):
its status, text, charts, queries, faithfulness check and usage. The query the
answer relies on is the first chart's, else the last successful one; it is run
again, whole, next to the gold query (``gold_db``) and the two results compared
(``result_match``). Answer accuracy looks for the gold values in the text and charts
(``answer_match``).
"""
from __future__ import annotations

import math
from collections import Counter
from typing import Any

from shared.usage_figures import TOKEN_FIELDS
from sunrise.eval.answer_match import gold_values, match_answer
from sunrise.eval.gold import GoldItem
from sunrise.eval.gold_db import EvalDatabase, QueryRun, orders_rows
from sunrise.eval.result_match import ResultSet, compare_results

ROWS_SHOWN = 10


def relied_on_query(answer: dict[str, Any]) -> dict[str, Any] | None:
    """The query an answer relies on: its first chart's, else its last successful one."""
    queries = answer.get("queries") or []
    charts = answer.get("charts") or []
    if charts:
        first = charts[0]
        named = next((q for q in queries if q["query_id"] == first.get("query_id")), None)
        if named is not None:
            return named
        if first.get("sql"):
            return {"query_id": first.get("query_id"), "sql": first["sql"]}
    return queries[-1] if queries else None


def gold_result(item: GoldItem, db: EvalDatabase) -> QueryRun:
    """The gold result: the gold SQL's, or ``values`` as a result."""
    if item.sql is not None:
        return db.run(item.sql)
    rows = item.value_rows()
    width = len(rows[0]) if rows else 1
    return QueryRun(ResultSet.of([f"value_{i + 1}" for i in range(width)], rows), None, len(rows))


def score_question(item: GoldItem, answer: dict[str, Any], db: EvalDatabase) -> dict[str, Any]:
    """The verdicts on one question, with what a reader needs to see why."""
    gold = gold_result(item, db)
    ordered = item.ordered if item.ordered is not None else bool(item.sql and orders_rows(item.sql))
    query = relied_on_query(answer) if answer.get("status") == "succeeded" else None
    mine = db.run(query["sql"]) if query else None
    scored = gold.result is not None
    execution: dict[str, Any]
    if not scored:
        execution = {"correct": None, "reason": f"The gold query failed: {gold.error}"}
    elif answer.get("status") != "succeeded":
        code = (answer.get("error") or {}).get("code") or answer.get("status")
        execution = {"correct": False, "reason": f"The question was not answered ({code})."}
    elif query is None:
        execution = {"correct": False, "reason": "The answer relies on no query."}
    elif mine.result is None:
        execution = {"correct": False, "reason": f"Sunrise's query could not be re-run: "
                                                 f"{mine.error}"}
    else:
        verdict = compare_results(gold.result, mine.result, ordered=ordered,
                                  tolerance=item.tolerance)
        execution = {"correct": verdict.equal, "reason": verdict.reason,
                     "row_index": verdict.row_index, "gold_row": verdict.gold_row,
                     "sunrise_row": verdict.sunrise_row}
    values = gold_values(gold.result.rows) if scored else []
    shown = match_answer(values, answer.get("answer_text") or "", answer.get("charts") or [],
                         item.tolerance) if answer.get("status") == "succeeded" else None
    return {
        "id": item.id, "tier": item.tier, "question": item.question, "notes": item.notes,
        "job_id": answer.get("job_id"), "status": answer.get("status"),
        "error": answer.get("error"), "model": answer.get("model"),
        "parse_path": answer.get("parse_path"), "scored": scored,
        "gold": {"sql": item.sql, "values": item.values, "ordered": ordered,
                 "tolerance": item.tolerance, **_result_view(gold)},
        "sunrise": {"answer_text": answer.get("answer_text"), "charts": len(answer.get("charts") or []),
                    "sql": query["sql"] if query else None,
                    "query_id": query["query_id"] if query else None,
                    "queries": len(answer.get("queries") or []),
                    **(_result_view(mine) if mine else {"columns": [], "rows": [], "row_count": 0,
                                                        "error": None})},
        "execution": execution,
        "answer": {"correct": bool(shown and shown.correct),
                   "found": shown.found if shown else 0, "total": len(values),
                   "missing": shown.missing if shown else []},
        "numbers": answer.get("numbers"),
        "usage": answer.get("usage") or {},
    }


def _result_view(run: QueryRun) -> dict[str, Any]:
    if run.result is None:
        return {"columns": [], "rows": [], "row_count": run.total_rows, "error": run.error}
    return {"columns": run.result.columns, "rows": [list(r) for r in run.result.rows[:ROWS_SHOWN]],
            "row_count": len(run.result.rows), "error": None}


def summarise(questions: list[dict[str, Any]]) -> dict[str, Any]:
    """The run's figures: accuracy (overall and per tier), faithfulness, tokens, cost,
    latency, rounds, parse paths and failure codes."""
    answered = [q for q in questions if q["status"] == "succeeded"]
    checked = [q for q in answered if q.get("numbers")]
    usage = [q["usage"] for q in questions]
    wall = [u.get("wall_ms") or 0 for u, q in zip(usage, questions, strict=True)
            if q["status"] in ("succeeded", "failed")]
    rounds = [u.get("tool_rounds") or 0 for u in usage]
    cost = sum(float(u.get("cost_usd") or 0) for u in usage)
    tiers: dict[str, list[dict]] = {}
    for q in questions:
        tiers.setdefault(q["tier"], []).append(q)
    return {
        **_accuracy(questions),
        "answered": len(answered),
        "failed": len(questions) - len(answered),
        "faithful_answers": sum(not q["numbers"]["unsupported"] for q in checked),
        "faithfulness": _ratio(sum(not q["numbers"]["unsupported"] for q in checked), len(checked)),
        "figures_checked": sum(q["numbers"]["checked"] for q in checked),
        "figures_unsupported": sum(len(q["numbers"]["unsupported"]) for q in checked),
        "tokens": {name: sum(u.get(name) or 0 for u in usage) for name in TOKEN_FIELDS},
        "cost_usd": round(cost, 6),
        "cost_per_question_usd": round(cost / len(questions), 6) if questions else 0.0,
        "latency_ms": {"p50": _percentile(wall, 50), "p95": _percentile(wall, 95)},
        "rounds": {"mean": round(sum(rounds) / len(rounds), 2) if rounds else 0.0,
                   "max": max(rounds, default=0)},
        "parse_paths": dict(Counter(q["parse_path"] for q in answered if q["parse_path"])),
        "failure_codes": dict(Counter((q["error"] or {}).get("code") or q["status"]
                                      for q in questions if q["status"] != "succeeded")),
        "by_tier": {tier: _accuracy(items) for tier, items in tiers.items()},
    }


def _accuracy(questions: list[dict[str, Any]]) -> dict[str, Any]:
    scored = [q for q in questions if q["scored"]]
    execution = sum(bool(q["execution"]["correct"]) for q in scored)
    answer = sum(q["answer"]["correct"] for q in scored)
    return {"questions": len(questions), "scored": len(scored),
            "execution_correct": execution, "execution_accuracy": _ratio(execution, len(scored)),
            "answer_correct": answer, "answer_accuracy": _ratio(answer, len(scored))}


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _percentile(values: list[float], pct: float) -> float | None:
    """Nearest-rank percentile; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(1, math.ceil(pct / 100 * len(ordered))) - 1]
