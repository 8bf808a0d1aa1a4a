"""``make bench``: run every figure and write BENCHMARKS.md.

    python -m bench.run_all [--smoke] [--only a,b] [--output PATH] [--no-profile]

Figures run one after another (they would disturb each other's timings otherwise).
A bench that fails is reported in the table and the run goes on; the exit status is
1 if any bench failed, 0 otherwise (a missed target is a finding, not a failure).
The raw results also go to ``bench/results.json`` (committed, so that any clone can
re-measure one figure); with ``--only``, the figures not run keep their results from
there (each figure says when it was measured). Smoke runs keep theirs under ``var/``.
"""
from __future__ import annotations

import argparse
import datetime as dt
import importlib
import inspect
import json
import logging
import sys
import time
import traceback
from pathlib import Path

from bench import report
from shared.config import PROJECT_ROOT, VAR_DIR

logger = logging.getLogger("bench.run_all")

# In the order of the figures; a module another engineer has not written yet
# is skipped with a note.
BENCHES = ("engine_overhead", "conversations_per_worker", "api_submit", "completion_notify",
           "token_efficiency", "large_results", "faithfulness", "scaling", "dataset_import",
           "messy_files", "queue_response", "cli_startup", "live_engines", "row_policies",
           "auth_overhead", "schedule_tick",
           "verified_retrieval", "tracing_overhead", "mcp_ask",
           "live_vs_snapshot", "live_spark")


def run_bench(name: str, *, smoke: bool, profile: bool) -> dict:
    """Run ``bench.<name>``; never raises: a failure is returned as ``{"error": ...}``."""
    started = time.monotonic()
    try:
        module = importlib.import_module(f"bench.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"bench.{name}":
            raise
        return {"name": name, "error": f"bench/{name}.py does not exist yet", "seconds": 0}
    kwargs = {"smoke": smoke}
    if "profile" in inspect.signature(module.run).parameters:
        kwargs["profile"] = profile
    try:
        outcome = module.run(**kwargs)
        if hasattr(module, "markdown"):
            outcome["markdown"] = module.markdown(outcome)
    except Exception:
        logger.exception("bench %s failed", name)
        outcome = {"name": name, "error": traceback.format_exc()}
    outcome.setdefault("name", name)
    outcome["seconds"] = round(time.monotonic() - started, 1)
    outcome["measured_at"] = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return outcome


def merge_previous(results: list[dict], raw_path: Path) -> list[dict]:
    """With ``--only``, the other figures keep their last measured results (if any)."""
    try:
        previous = {o["name"]: o for o in _load(raw_path)["results"]}
    except (OSError, ValueError, KeyError, TypeError):
        previous = {}
    fresh = {o["name"]: o for o in results}
    merged = {**previous, **fresh}
    return [merged[name] for name in BENCHES if name in merged]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.run_all", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: seconds per figure")
    parser.add_argument("--only", default="", help="comma-separated bench names")
    parser.add_argument("--output", type=Path, default=PROJECT_ROOT / "BENCHMARKS.md")
    parser.add_argument("--raw", type=Path, default=None,
                        help="raw results JSON (default bench/results.json; smoke: var/bench-results-smoke.json)")
    parser.add_argument("--render-only", action="store_true",
                        help="rewrite the report from the raw results (after editing "
                             "bench/notes/), measuring nothing")
    parser.add_argument("--no-profile", action="store_true",
                        help="no py-spy pass on a miss (smoke runs never profile)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    logger.setLevel(logging.INFO)

    names = [n for n in BENCHES if not args.only or n in args.only.split(",")]
    started, before = dt.datetime.now(dt.UTC), report.machine()
    raw_path = args.raw or (VAR_DIR / "bench-results-smoke.json" if args.smoke
                            else PROJECT_ROOT / "bench" / "results.json")
    if args.render_only:
        raw = _load(raw_path)
        report.write(args.output, report.render(
            raw["results"], raw.get("machine_before", before), raw.get("machine_after", before),
            dt.datetime.fromisoformat(raw.get("started", started.isoformat())), args.smoke))
        logger.info("rewrote %s from %s", args.output, raw_path)
        return 0
    results = []
    for name in names:
        logger.info("running %s%s", name, " (smoke)" if args.smoke else "")
        outcome = run_bench(name, smoke=args.smoke,
                            profile=not (args.no_profile or args.smoke))
        for r in outcome.get("rows", []):
            logger.info("  %s: %s (baseline %s, ratio %s, target %s)", r["measure"], r["value"],
                        r["baseline"] or "-", r["ratio"], r["target"] or "-")
        if "error" in outcome:
            logger.error("  %s failed: %s", name, outcome["error"].strip().splitlines()[-1])
        results.append(outcome)
    if args.only:
        results = merge_previous(results, raw_path)
    after = report.machine()
    report.write(args.output, report.render(results, before, after, started, args.smoke))
    raw_path.parent.mkdir(parents=True, exist_ok=True)
    raw_path.write_text(json.dumps({"started": started.isoformat(), "machine_before": before,
                                    "machine_after": after, "results": results},
                                   indent=1, default=str))
    logger.info("wrote %s", args.output)
    return 1 if any("error" in outcome for outcome in results) else 0


def _load(raw_path: Path) -> dict:
    raw = json.loads(raw_path.read_text())
    return raw if isinstance(raw, dict) else {"results": raw}


if __name__ == "__main__":
    sys.exit(main())
