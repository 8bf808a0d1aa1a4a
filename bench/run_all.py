"""``make bench``: run every figure and write BENCHMARKS.md.

    python -m bench.run_all [--smoke] [--only a,b] [--output PATH] [--no-profile]

Figures run one after another (they would disturb each other's timings otherwise).
A bench that fails is reported in the table and the run goes on; the exit status is
1 if any bench failed, 0 otherwise (a missed target is a finding, not a failure).
The raw results also go to ``var/bench-results.json``.
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
           "token_efficiency", "large_results", "scaling")


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
    return outcome


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.run_all", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: seconds per figure")
    parser.add_argument("--only", default="", help="comma-separated bench names")
    parser.add_argument("--output", type=Path, default=PROJECT_ROOT / "BENCHMARKS.md")
    parser.add_argument("--no-profile", action="store_true",
                        help="no py-spy pass on a miss (smoke runs never profile)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    logger.setLevel(logging.INFO)

    names = [n for n in BENCHES if not args.only or n in args.only.split(",")]
    started, before = dt.datetime.now(dt.UTC), report.machine()
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
    text = report.render(results, before, report.machine(), started, args.smoke)
    report.write(args.output, text)
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    (VAR_DIR / "bench-results.json").write_text(json.dumps(results, indent=1, default=str))
    logger.info("wrote %s", args.output)
    return 1 if any("error" in outcome for outcome in results) else 0


if __name__ == "__main__":
    sys.exit(main())
