"""Verified queries found by meaning (issue 37, "Measured").

Every gold question of the sample data (``examples/nycflights13-gold.yaml``) is kept as
a verified query with its gold SQL; each is then asked in other words
(``bench/data/verified_paraphrases.yaml``, written by hand once). Per paraphrase:

- **right in top 3**: its own gold question is among the 3 verified queries given to
  the model (``worker/agent/verified_queries.nearest``);
- **wrong verified**: the answer would be marked verified with another question's
  query. The offline model runs the best-scoring verified query when its similarity
  is at least its ADOPT_AT, and the mark comes from the SQL it ran
  (``VerifiedContext.relied_on``), so this counts adoptions of a wrong query;
- **CPU per question**: embedding the question on one thread, ranking and the mark
  (``time.thread_time``), after a warm-up.

The prompt cache: two agent loops on the offline model, a question without verified
queries, then a paraphrase with them. The second reads the same cached prefix (system
prompt and tools) the first wrote; the verified queries are uncached input of the turn.
"""
from __future__ import annotations

import datetime as dt
import json
import statistics
import sys
import time
from pathlib import Path

import yaml

from bench.figures import result, row
from bench.stack import SAMPLE_DUCKDB
from engine.embeddings import embed_one, load_embedder
from sunrise.fake_llm.verified_block import ADOPT_AT
from worker.agent.verified_queries import MARK_AT, Verified, VerifiedContext

ROOT = Path(__file__).resolve().parent.parent
GOLD = ROOT / "examples" / "nycflights13-gold.yaml"
PARAPHRASES = Path(__file__).resolve().parent / "data" / "verified_paraphrases.yaml"
TOP3_TARGET, WRONG_TARGET, CPU_TARGET_MS = 0.90, 0.01, 20.0


def _measure(smoke: bool) -> dict:
    gold = {q["id"]: q for q in yaml.safe_load(GOLD.read_text())["questions"] if q.get("sql")}
    paraphrases = yaml.safe_load(PARAPHRASES.read_text())
    embedder = load_embedder()
    known = [Verified(gid, q["question"], q["sql"], embed_one(embedder, q["question"]))
             for gid, q in gold.items()]
    asked = [(gid, text) for gid, text in paraphrases.items() if gid in gold]
    if smoke:
        asked = asked[:10]
    for _, text in asked[:3]:  # warm-up, untimed
        VerifiedContext.for_vector(embed_one(embedder, text), known)
    embed_one.cache_clear()  # every timed question is embedded, none remembered
    top3 = wrong = right_marked = 0
    cpu_ms, misses = [], []
    for gid, text in asked:
        started = time.thread_time()
        context = VerifiedContext.for_vector(embed_one(embedder, text), known)
        found = context.retrieved
        adopted = found[0].query.sql if found and found[0].similarity >= ADOPT_AT else None
        mark = context.relied_on(adopted)
        cpu_ms.append((time.thread_time() - started) * 1000)
        if any(r.query.verified_query_id == gid for r in found):
            top3 += 1
        else:
            misses.append({"id": gid, "asked": text,
                           "got": [r.query.verified_query_id for r in found]})
        if mark is not None:
            if mark["verified_query_id"] == gid:
                right_marked += 1
            else:
                wrong += 1
    count = len(asked)
    return {"questions": count, "top3": top3 / count, "wrong_verified": wrong / count,
            "right_verified": right_marked / count, "cpu_ms_median": statistics.median(cpu_ms),
            "cpu_ms_p90": sorted(cpu_ms)[int(0.9 * (count - 1))], "misses": misses,
            "adopt_at": ADOPT_AT, "mark_at": MARK_AT,
            **dict(zip(("model_floor_ms", "model_streamed_ms"), _model_floor_ms()))}


def _model_floor_ms(rounds: int = 20) -> tuple[float, float]:
    """CPU of the model's matrix products alone for a 12-token question, one thread:
    the floor any numpy MiniLM pays on this host, measured beside the figure. Twice:
    on one layer's worth of weights reused six times (they stay in cache: the bound
    for arithmetic), and on six layers' distinct weights laid out as the model keeps
    them (42 MB read per question, as the model does: the bound it really meets)."""
    import numpy as np
    from threadpoolctl import threadpool_limits

    from engine.embeddings.weight_block import in_one_block

    shapes = [(384, 1152), (384, 384), (384, 1536), (1536, 384)]
    rng = np.random.default_rng(37)
    streamed = in_one_block([rng.standard_normal(shape, dtype=np.float32)
                             for _layer in range(6) for shape in shapes])
    cached = streamed[:4] * 6
    x, inner = np.ones((1, 12, 384), dtype=np.float32), np.ones((1, 12, 1536), dtype=np.float32)

    def products(weights: list) -> float:
        started = time.thread_time()
        for _ in range(rounds):
            for i in range(0, len(weights), 4):
                qkv, out, up, down = weights[i:i + 4]
                x @ qkv
                x @ out
                x @ up
                inner @ down
        return (time.thread_time() - started) / rounds * 1000

    with threadpool_limits(limits=1):
        products(streamed)  # warm-up: first touch of the block's pages
        return products(cached), products(streamed)


def _cache(gold: dict) -> dict:
    """Tokens of a job without verified queries, then of one with them."""
    from engine.sql.sandbox import SqlSandbox, sandbox_settings
    from shared.config import Settings
    from sunrise.fake_llm.server import run_in_thread
    from worker.agent.loop import AgentLoop
    from worker.agent.system_prompt import build_system_prompt
    from worker.agent.turn import SilentHooks
    from worker.llm.client import make_client

    embedder = load_embedder()
    known = [Verified(gid, q["question"], q["sql"], embed_one(embedder, q["question"]))
             for gid, q in gold.items()]
    server = run_in_thread(port=0)
    try:
        settings = Settings(duckdb_path=str(SAMPLE_DUCKDB), anthropic_api_key="bench-offline",
                            anthropic_base_url=server.base_url)
        sandbox = SqlSandbox(settings.duckdb_path, **sandbox_settings(settings))
        try:
            prompt = build_system_prompt(sandbox.describe_schema(), dt.date.today())
            client = make_client(settings)
            runs = {}
            for label, question, verified in (
                    ("without verified queries", "How many flights are in the data?", None),
                    ("with 3 verified queries", "Which airline operated the largest number of flights?",
                     "retrieve")):
                context = None
                if verified:
                    context = VerifiedContext.for_vector(embed_one(embedder, question), known)
                loop = AgentLoop(client=client, sandbox=sandbox, settings=settings,
                                 system_prompt=prompt, hooks=SilentHooks(), verified=context)
                outcome = loop.run([], question)
                usage = outcome.stats.usage
                runs[label] = {"cache_read": usage.cache_read_tokens,
                               "cache_write": usage.cache_creation_tokens,
                               "input": usage.input_tokens, "calls": outcome.stats.llm_calls,
                               "verified": outcome.verified}
        finally:
            sandbox.close()
    finally:
        server.stop()
    return runs


def run(smoke: bool = False) -> dict:
    figures = _measure(smoke)
    gold = {q["id"]: q for q in yaml.safe_load(GOLD.read_text())["questions"] if q.get("sql")}
    cache = _cache(gold)
    plain, with_vq = cache["without verified queries"], cache["with 3 verified queries"]
    n = figures["questions"]
    rows = [
        row("verified retrieval", f"right verified query in the top 3 ({n} paraphrases)",
            f"{figures['top3']:.1%}", "", None, f"≥ {TOP3_TARGET:.0%}",
            figures["top3"] >= TOP3_TARGET),
        row("verified retrieval", f"answer marked verified with a wrong query (the offline "
            f"model runs the top one at ≥ {figures['adopt_at']:g}; marked at ≥ "
            f"{figures['mark_at']:g})", f"{figures['wrong_verified']:.1%}", "",
            None, f"≤ {WRONG_TARGET:.0%}", figures["wrong_verified"] <= WRONG_TARGET),
        row("verified retrieval", "paraphrase answered with its own verified query, marked",
            f"{figures['right_verified']:.1%}", "", None, "report", None),
        row("verified retrieval", "CPU per question: embed (1 thread), rank, mark (median)",
            f"{figures['cpu_ms_median']:.1f} ms (p90 {figures['cpu_ms_p90']:.1f})",
            f"{figures['model_streamed_ms']:.1f} ms (its matrix products alone; "
            f"{figures['model_floor_ms']:.1f} ms with the weights in cache)",
            figures["cpu_ms_median"] / figures["model_streamed_ms"],
            f"≤ {CPU_TARGET_MS:g} ms", figures["cpu_ms_median"] <= CPU_TARGET_MS),
        row("verified retrieval", "prompt cache: tokens read from the cache by a job with "
            "verified queries, after one without",
            f"{with_vq['cache_read']:,} read, {with_vq['cache_write']:,} written (its turn)",
            f"{plain['cache_write']:,} written by the job without", None,
            "reads the same prefix", with_vq["cache_read"] >= plain["cache_write"] > 0),
    ]
    return result("verified_retrieval", smoke, rows, **figures, cache=cache)


if __name__ == "__main__":
    print(json.dumps(run(smoke="--smoke" in sys.argv[1:]), indent=2, default=str))
