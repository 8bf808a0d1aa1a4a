"""The shape every bench returns, and the small statistics they share.

A bench's ``run()`` returns ``{"name", "smoke", "rows": [row...], "details": {...}}``;
each row is one line of the BENCHMARKS.md table: what was measured, its value, the
baseline measured in the same run, their ratio, the target and whether it was met.
"""
from __future__ import annotations

import math
import resource
import time
from collections.abc import Sequence
from contextlib import contextmanager

from bench.stack import ServiceProcess, cpu_of_command

# The figures' job: 2 model rounds and 1 query on the offline model.
QUESTION = "How many flights did each carrier fly?"


def row(figure: str, measure: str, value: str, baseline: str = "", ratio: float | None = None,
        target: str = "", passed: bool | None = None) -> dict:
    """One table row; ``passed`` is None when the figure has no target (report only)."""
    return {"figure": figure, "measure": measure, "value": value, "baseline": baseline,
            "ratio": None if ratio is None else round(ratio, 3), "target": target,
            "pass": passed}


def result(name: str, smoke: bool, rows: list[dict], **details) -> dict:
    return {"name": name, "smoke": smoke, "rows": rows, "details": details}


def percentile(values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile (``pct`` in 0..100) of a non-empty sequence."""
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[rank - 1]


def self_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class CpuMeter:
    """CPU seconds spent by each named process (and MariaDB, Redis, this driver) over a span.

    Where the time goes matters more than wall time on a shared 2-core machine: it
    says which process is the bottleneck and what one job costs each of them.
    """

    def __init__(self, processes: dict[str, ServiceProcess]):
        self.processes = processes
        self.spent: dict[str, float] = {}

    def _sample(self) -> dict[str, float]:
        sample = {name: proc.cpu_seconds() for name, proc in self.processes.items()}
        sample["mariadb"] = cpu_of_command("mariadbd")
        sample["redis"] = cpu_of_command("redis-server")
        sample["bench driver"] = self_cpu_seconds()
        return sample

    @contextmanager
    def span(self):
        before, started = self._sample(), time.perf_counter()
        try:
            yield self
        finally:
            after = self._sample()
            self.spent = {name: after[name] - before[name] for name in before}
            self.spent["wall"] = time.perf_counter() - started

    def per_item_ms(self, items: int) -> dict[str, float]:
        """CPU milliseconds per item (job, request) of each process, plus wall time."""
        return {name: round(seconds * 1000 / max(1, items), 2)
                for name, seconds in self.spent.items()}


def cpu_rows(figure: str, per_item: dict[str, float], what: str,
             targets: dict[str, float] | None = None) -> list[dict]:
    """Table rows for CPU per item: one per targeted process (value ≤ target), then one
    report row with every process. CPU time, unlike wall time, barely moves with other
    load on a shared machine, so these are the primary figures of a job's cost."""
    targets = targets or {}
    rows = [row(figure, f"{name} CPU per {what}", f"{per_item[name]:.1f} ms", "", None,
                f"≤ {limit:g} ms", per_item[name] <= limit)
            for name, limit in targets.items() if name in per_item]
    spread = " · ".join(f"{name} {ms:.1f}" for name, ms in per_item.items()
                        if name not in ("wall", "bench driver"))
    rows.append(row(figure, f"CPU ms per {what}, each process", spread, "", None, "report"))
    return rows
