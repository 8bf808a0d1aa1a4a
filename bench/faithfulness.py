"""Figure 7, faithfulness of figures: how often the check flags a correct answer, and how
often it catches a figure that was altered.

The corpus (``bench/faithfulness_corpus.py``) is fixed: questions about the sample
data, the SQL run through the worker's own sandbox (so the tool-result texts are the
exact ones a model is shown), and answers worded from the real rows in two styles
per figure. False positives: correct answers with at least one figure flagged
(target ≤ 2 % of answers). Detection: each figure of each answer rewritten from its
value changed by a factor drawn from ±1 %..50 % (seeded, three per figure, redrawn
while the rewritten text equals the original), counted as detected when that very
figure is flagged (target ≥ 95 %). The question and the SQL count as seen, as in the
agent loop, and so do the calendar years the data spans. No LLM, no services: the
check is a pure function.
"""
from __future__ import annotations

import logging
import random
import time

from bench.faithfulness_corpus import CASES, VARIANTS, Case, Fig, Rows, render
from bench.figures import result, row
from bench.stack import SAMPLE_DUCKDB
from engine.sql.result_text import result_text
from engine.sql.sandbox import SqlSandbox
from shared.config import Settings
from sunrise.sample_data import build_sample_db
from worker.answer.data_years import data_years
from worker.answer.number_check import Evidence, check_numbers, evidence_from

logger = logging.getLogger(__name__)

FP_TARGET = 0.02
DETECTION_TARGET = 0.95
ALTERATIONS_PER_FIGURE = 3
SEED = 17
BUCKETS = ((0.01, 0.05), (0.05, 0.2), (0.2, 0.5))


def run(smoke: bool = False) -> dict:
    """False-positive and detection rates over the corpus (smoke: five cases)."""
    cases = CASES[:5] if smoke else CASES
    settings = Settings()
    sandbox = SqlSandbox(build_sample_db(SAMPLE_DUCKDB), memory_limit=settings.sql_memory_limit,
                         threads=settings.sql_threads, timeout_s=60)
    try:
        years = data_years(sandbox)
        prepared = [_prepare(sandbox, case, years) for case in cases]
    finally:
        sandbox.close()
    rng = random.Random(SEED)
    answers = flagged = 0
    false_positives: list[dict] = []
    tries: list[dict] = []
    check_seconds = 0.0
    checks = 0
    for case, parts, evidence in prepared:
        for variant in range(VARIANTS):
            text, _ = render(parts, variant)
            started = time.perf_counter()
            found = check_numbers(text, evidence)
            check_seconds += time.perf_counter() - started
            checks += 1
            answers += 1
            if found["unsupported"]:
                flagged += 1
                false_positives.append({"question": case.question, "text": text,
                                        "unsupported": found["unsupported"]})
            tries += _alterations(case, parts, evidence, variant, rng)
    detected = sum(t["detected"] for t in tries)
    fp_rate = flagged / answers
    detection = detected / len(tries)
    buckets = {f"{lo:.0%}–{hi:.0%}": _rate([t for t in tries if lo <= t["change"] < hi])
               for lo, hi in BUCKETS}
    rows = [
        row("7 faithfulness", "correct answers with a figure flagged (false positives)",
            f"{flagged} of {answers} ({fp_rate:.1%})", "", fp_rate, f"≤ {FP_TARGET:.0%}",
            fp_rate <= FP_TARGET),
        row("7 faithfulness", "figures altered by ±1–50 % that were flagged (detection)",
            f"{detected} of {len(tries)} ({detection:.1%})", "", detection,
            f"≥ {DETECTION_TARGET:.0%}", detection >= DETECTION_TARGET),
        row("7 faithfulness", "check time per answer (corpus answers)",
            f"{check_seconds / checks * 1e6:,.0f} µs", "", None, "report", None),
    ]
    return result("faithfulness", smoke, rows, cases=len(cases), answers=answers,
                  figures_per_answer=round(sum(
                      sum(isinstance(p, Fig) for p in parts) for _, parts, _ in prepared)
                      / len(prepared), 1),
                  altered=len(tries), detection_by_change=buckets,
                  false_positives=false_positives,
                  missed=[t for t in tries if not t["detected"]][:40])


def _prepare(sandbox: SqlSandbox, case: Case, years: frozenset[int]) -> tuple[Case, list, Evidence]:
    results = [sandbox.run(sql) for sql in case.sql]
    failed = [r.error for r in results if r.is_error]
    if failed:
        raise RuntimeError(f"corpus query failed for {case.question!r}: {failed[0]}")
    parts = case.write(*(Rows(r) for r in results))
    evidence = evidence_from([result_text(r, index + 1) for index, r in enumerate(results)],
                             [case.question])
    for sql in case.sql:
        evidence.add_sql(sql)
    evidence.add_years(years)
    return case, parts, evidence


def _alterations(case: Case, parts: list, evidence: Evidence, variant: int,
                 rng: random.Random) -> list[dict]:
    original, _ = render(parts, variant)
    figures = [p for p in parts if isinstance(p, Fig)]
    tries = []
    for index, figure in enumerate(figures):
        if not figure.alterable:
            continue
        for _ in range(ALTERATIONS_PER_FIGURE):
            for _attempt in range(20):
                change = rng.uniform(0.01, 0.5)
                factor = 1 + change if rng.random() < 0.5 else 1 - change
                text, spans = render(parts, variant, (index, factor))
                if text != original:
                    break
            else:
                continue  # rounding hides every change of this figure: nothing was altered
            start, end = spans[index]
            found = check_numbers(text, evidence)["unsupported"]
            # The figure's span may include a hedge ("about 32,000"); the flag is on the number.
            tries.append({"question": case.question, "change": round(change, 4),
                          "factor": round(factor, 4), "figure": text[start:end],
                          "detected": any(start <= u["position"] < end for u in found)})
    return tries


def _rate(tries: list[dict]) -> dict:
    detected = sum(t["detected"] for t in tries)
    return {"altered": len(tries), "detected": detected,
            "rate": round(detected / len(tries), 4) if tries else None}


def markdown(outcome: dict) -> str:
    details = outcome["details"]
    lines = [f"{details['cases']} questions, {details['answers']} correct answers "
             f"(≈ {details['figures_per_answer']} figures each), {details['altered']} "
             "altered answers.", "", "| change | altered | detected | rate |", "|---|---:|---:|---:|"]
    for bucket, figures in details["detection_by_change"].items():
        rate = "–" if figures["rate"] is None else f"{figures['rate']:.1%}"
        lines.append(f"| {bucket} | {figures['altered']} | {figures['detected']} | {rate} |")
    if details["false_positives"]:
        lines += ["", "False positives (correct answers flagged):", ""]
        lines += [f"- {fp['question']}: {', '.join(u['text'] for u in fp['unsupported'])}"
                  for fp in details["false_positives"]]
    if details["missed"]:
        lines += ["", "Altered figures not flagged (the altered value is one the results show "
                  "for something else, or rounds to one):", ""]
        lines += [f"- {m['question']}: `{m['figure']}` (×{m['factor']})"
                  for m in details["missed"][:15]]
    return "\n".join(lines)
