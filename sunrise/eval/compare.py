"""Two evaluation runs side by side: accuracy, faithfulness and cost deltas, and the
questions whose verdict changed. How a team chooses a model, an effort setting or a
prompt with evidence: run the same gold file both ways, compare.

Questions are matched by id; ids only one run has are listed, not compared.
"""
from __future__ import annotations

from typing import Any

# (key in the summary, label, kind): kind says how the delta reads.
METRICS = (
    ("execution_accuracy", "Execution accuracy", "ratio"),
    ("answer_accuracy", "Answer accuracy", "ratio"),
    ("faithfulness", "Answers with every figure supported", "ratio"),
    ("cost_usd", "Cost", "usd"),
    ("cost_per_question_usd", "Cost per question", "usd"),
    ("latency_p50_ms", "Latency p50", "ms"),
    ("latency_p95_ms", "Latency p95", "ms"),
    ("rounds_mean", "Tool rounds per question", "number"),
    ("input_tokens", "Input tokens", "number"),
    ("output_tokens", "Output tokens", "number"),
)


def compare_runs(current: dict[str, Any], earlier: dict[str, Any]) -> dict[str, Any]:
    """The comparison of ``current`` against ``earlier`` (both eval reports)."""
    before, after = _flat(earlier["summary"]), _flat(current["summary"])
    metrics = []
    for key, label, kind in METRICS:
        old, new = before.get(key), after.get(key)
        delta = None if old is None or new is None else round(new - old, 6)
        metrics.append({"key": key, "label": label, "kind": kind, "before": old, "after": new,
                        "delta": delta})
    old_questions = {q["id"]: q for q in earlier["questions"]}
    new_questions = {q["id"]: q for q in current["questions"]}
    changed = []
    for qid, new in new_questions.items():
        old = old_questions.get(qid)
        if old is None:
            continue
        was, now = old["execution"]["correct"], new["execution"]["correct"]
        was_answer, now_answer = old["answer"]["correct"], new["answer"]["correct"]
        if was != now or was_answer != now_answer:
            changed.append({"id": qid, "question": new["question"], "tier": new["tier"],
                            "execution": [was, now], "answer": [was_answer, now_answer]})
    return {
        "earlier": {key: earlier.get(key) for key in ("title", "generated_at", "models",
                                                      "gold_file", "mode")},
        "metrics": metrics,
        "fixed": sum(1 for c in changed if c["execution"] == [False, True]),
        "broken": sum(1 for c in changed if c["execution"] == [True, False]),
        "changed": changed,
        "only_earlier": sorted(set(old_questions) - set(new_questions)),
        "only_current": sorted(set(new_questions) - set(old_questions)),
    }


def _flat(summary: dict[str, Any]) -> dict[str, float | None]:
    return {
        "execution_accuracy": summary.get("execution_accuracy"),
        "answer_accuracy": summary.get("answer_accuracy"),
        "faithfulness": summary.get("faithfulness"),
        "cost_usd": summary.get("cost_usd"),
        "cost_per_question_usd": summary.get("cost_per_question_usd"),
        "latency_p50_ms": (summary.get("latency_ms") or {}).get("p50"),
        "latency_p95_ms": (summary.get("latency_ms") or {}).get("p95"),
        "rounds_mean": (summary.get("rounds") or {}).get("mean"),
        "input_tokens": (summary.get("tokens") or {}).get("input_tokens"),
        "output_tokens": (summary.get("tokens") or {}).get("output_tokens"),
    }
