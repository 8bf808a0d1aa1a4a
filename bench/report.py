"""BENCHMARKS.md: the machine, the table of every figure, how to reproduce, what bounds each.

The generated part sits between two HTML comments; whatever else the file holds
(sections written by hand) is kept when the benchmarks run again. What bounds a figure
is prose written after measuring: it lives in ``bench/notes/<bench>.md``, one Markdown
file per bench, and is copied under the figure. The measured values behind every row
stay in the raw results (``bench/results.json``), not in the report.
"""
from __future__ import annotations

import datetime as dt
import os
import platform
import subprocess
from pathlib import Path

from shared.config import PROJECT_ROOT

BEGIN = "<!-- bench:generated:begin (python -m bench.run_all rewrites this part) -->"
END = "<!-- bench:generated:end -->"
NOTES_DIR = Path(__file__).resolve().parent / "notes"
# A profile summary is two ranked lists; the report keeps the head of each.
PROFILE_LINES = 5


def machine() -> dict:
    """What the figures were measured on; read-only look-ups."""
    cpu = "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem_kb = int(Path("/proc/meminfo").read_text().split()[1])
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gb": round(mem_kb / 2**20, 1),
            "os": platform.platform(), "python": platform.python_version(),
            "load_average_1m": round(os.getloadavg()[0], 2), "commit": _commit(),
            "mariadb": _version(["mariadb", "--version"]),
            "redis": _version(["redis-server", "--version"])}


def _commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=PROJECT_ROOT, capture_output=True,
                              text=True, timeout=10, check=False).stdout.strip()
    try:
        head = git("rev-parse", "--short", "HEAD") or "unknown"
        # The run's own outputs (a previous run's) are not changes to what is measured.
        changed = git("status", "--porcelain", "--", ".", ":!BENCHMARKS.md",
                      ":!bench/results.json")
        return head + (" + uncommitted changes" if changed else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _version(argv: list[str]) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
        return done.stdout.strip()[:80]
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def render(results: list[dict], before: dict, after: dict, started: dt.datetime,
           smoke: bool) -> str:
    lines = [BEGIN, "", "# Benchmarks", ""]
    if smoke:
        lines += [("> **Smoke run** (tiny sizes): these numbers prove the benches run, "
                   "nothing more."), ""]
    lines += [
        (f"Measured {started:%Y-%m-%d %H:%M} UTC on commit `{before['commit']}`: "
         f"{before['cpu']}, {before['cores']} cores, {before['memory_gb']} GB, {before['os']}, "
         f"Python {before['python']}, {before['mariadb']}, {before['redis']}. Load average "
         f"(1 min) {before['load_average_1m']} before and {after['load_average_1m']} after: "
         "the machine is shared, so every figure is a ratio against a baseline measured in "
         "the same run."), "",
        "| figure | measure | value | baseline (same run) | ratio | target | met |",
        "|---|---|---|---|---|---|---|"]
    for outcome in results:
        for r in outcome.get("rows", []):
            ratio = "" if r["ratio"] is None else f"{r['ratio']:g}"
            met = {True: "yes", False: "**no**", None: "–"}[r["pass"]]
            lines.append(f"| {r['figure']} | {r['measure']} | {r['value']} | {r['baseline']} "
                         f"| {ratio} | {r['target']} | {met} |")
        if "error" in outcome:
            lines.append(f"| {outcome['name']} | the bench failed: "
                         f"{outcome['error'].splitlines()[-1][:150]} | | | | | **no** |")
    lines += ["", "## How to reproduce", "", REPRODUCE, ""]
    lines += ["## What bounds each figure", ""]
    for outcome in results:
        lines += _section(outcome)
    lines.append(END)
    return "\n".join(lines) + "\n"


REPRODUCE = """\
```
make bench                                  # all figures, ~10 min; rewrites this file
.venv/bin/python -m bench.run_all --only token_efficiency,large_results
.venv/bin/python -m bench.run_all --smoke --output /tmp/b.md   # seconds per figure
```
Needs Redis and MariaDB on 127.0.0.1 (`make services` starts them). Each bench makes
its own MariaDB database and leases its own Redis database number, starts the
processes it measures (offline model, gunicorn API, Celery workers) on 127.0.0.1 and
stops exactly those. A figure that misses its target is profiled with py-spy in a
separate pass (`--no-profile` skips it); the summary is under the figure below.
Every measured value behind the table is in `bench/results.json`; what bounds each
figure is written in `bench/notes/<bench>.md` (after editing one, `--render-only`
rewrites this file without measuring). `tests/bench/test_bench_smoke.py` runs every
bench at smoke size in the test suite."""


def note(name: str) -> str:
    """The hand-written paragraph on what bounds figure ``name`` ("" if none yet)."""
    path = NOTES_DIR / f"{name}.md"
    return path.read_text().strip() if path.exists() else ""


def _section(outcome: dict) -> list[str]:
    name = outcome.get("name", "?")
    lines = [f"### {name}", ""]
    if text := note(name):
        lines += [text, ""]
    if "error" in outcome:
        lines += ["The bench failed:", "", "```", outcome["error"][-2000:], "```", ""]
        return lines
    if outcome.get("markdown"):
        lines += [outcome["markdown"], ""]
    profiles = outcome.get("details", {}).get("profile")
    if profiles:
        if isinstance(profiles, list):
            profiles = {"worker": profiles}
        for process, summary in profiles.items():
            lines += [f"Profile of the {process} (py-spy, separate pass after the miss):", "",
                      "```", *_head_of_each_list(summary), "```", ""]
    lines.append(f"_Ran in {outcome.get('seconds', 0):.0f} s"
                 f"{', ' + outcome['measured_at'] if 'measured_at' in outcome else ''}._")
    lines.append("")
    return lines


def _head_of_each_list(summary: list[str]) -> list[str]:
    """A profile summary's header lines with the first entries of each ranked list."""
    kept, run = [], 0
    for line in summary:
        ranked = line.startswith(" ")
        run = run + 1 if ranked else 0
        if not ranked or run <= PROFILE_LINES:
            kept.append(line)
    return kept


def write(path: Path, generated: str) -> None:
    """Replace the generated block of ``path`` (or create the file), keeping the rest."""
    old = path.read_text() if path.exists() else ""
    if BEGIN in old and END in old:
        head, rest = old.split(BEGIN, 1)
        tail = rest.split(END, 1)[1].lstrip("\n")
        text = head + generated + ("\n" + tail if tail else "")
    elif old.strip():
        # A file written by hand before the first run: keep it below the figures.
        text = generated + "\n" + old
    else:
        text = generated
    path.write_text(text)
