"""The command line's start-up (issue 33 §3): ``sunrise --help`` against a bare
``python -c pass``, each a fresh interpreter, alternated in the same run so that both
see the same host load.

Both run the interpreter of this process; the CLI as ``python -m sunrise.cli.main`` (what
the ``sunrise`` script runs). The figure is the median wall time of each; its ratio says
how much the CLI adds to starting Python at all. The issue asks for well under half a
second; on a quiet host Python starts in about 50 ms, so that is 10x, and the target is
a ratio (the host is shared: a busy one slows both sides alike) of at most 5x.
"""
from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time

from bench.figures import result, row

ROUNDS, SMOKE_ROUNDS = 21, 3
TARGET_RATIO = 5.0
BARE = (sys.executable, "-c", "pass")
COMMANDS = {"sunrise --help": (sys.executable, "-m", "sunrise.cli.main", "--help"),
            "sunrise ask --help": (sys.executable, "-m", "sunrise.cli.main", "ask", "--help")}


def _wall_s(argv: tuple[str, ...]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
                   timeout=60)
    return time.perf_counter() - started


def run(smoke: bool = False) -> dict:
    rounds = SMOKE_ROUNDS if smoke else ROUNDS
    walls: dict[str, list[float]] = {"python -c pass": [], **{name: [] for name in COMMANDS}}
    for argv in (BARE, *COMMANDS.values()):  # warm the page cache first, untimed
        _wall_s(argv)
    for _ in range(rounds):
        walls["python -c pass"].append(_wall_s(BARE))
        for name, argv in COMMANDS.items():
            walls[name].append(_wall_s(argv))
    median = {name: statistics.median(values) for name, values in walls.items()}
    bare = median["python -c pass"]
    rows = [row("CLI start-up", f"`{name}` wall time (median of {rounds})",
                f"{median[name] * 1000:.0f} ms", f"{bare * 1000:.0f} ms (`python -c pass`)",
                median[name] / bare,
                f"≤ {TARGET_RATIO:g}×" if name == "sunrise --help" else "report",
                median[name] / bare <= TARGET_RATIO if name == "sunrise --help" else None)
            for name in COMMANDS]
    return result("cli_startup", smoke, rows, rounds=rounds, median_s=median,
                  wall_s={name: [round(v, 4) for v in values] for name, values in walls.items()})


if __name__ == "__main__":
    outcome = run(smoke="--smoke" in sys.argv[1:])
    print(json.dumps(outcome, indent=2, default=str))
