"""Sampling profiles of running processes with py-spy, summarised for BENCHMARKS.md.

py-spy samples every thread of another process from outside (no code change, no
restart), which is what a threads-pool Celery worker needs: an in-process profiler
would only see the thread it runs on. A profile is taken in a separate pass after a
figure misses its target, never during the measured run.
"""
from __future__ import annotations

import collections
import logging
import shutil
import subprocess
import sys
from pathlib import Path

logger = logging.getLogger(__name__)


def py_spy() -> str | None:
    beside = Path(sys.executable).with_name("py-spy")
    return str(beside) if beside.exists() else shutil.which("py-spy")


class Recording:
    """``py-spy record`` of one process (and its children) into collapsed stacks."""

    def __init__(self, pid: int, out: Path, seconds: float, *, rate: int = 200,
                 gil: bool = False):
        """``gil=True`` keeps only samples of the thread holding the GIL: where the CPU
        of a many-threaded process goes, rather than where its threads wait."""
        self.out = out
        self.proc: subprocess.Popen | None = None
        binary = py_spy()
        if binary is None:
            logger.warning("py-spy is not installed; no profile of pid %s", pid)
            return
        self.proc = subprocess.Popen(
            [binary, "record", "--pid", str(pid), "--duration", str(max(1, int(seconds))),
             "--rate", str(rate), "--format", "raw", "--output", str(out), "--subprocesses",
             "--nonblocking", *(["--gil"] if gil else [])],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def finish(self, timeout: float = 60.0) -> list[str]:
        """Wait for py-spy to write its file; returns the summary lines (empty if none)."""
        if self.proc is None:
            return ["(py-spy not installed)"]
        try:
            _, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        if not self.out.exists():
            return [f"(py-spy wrote no profile: {err.decode(errors='replace').strip()[-300:]})"]
        return summarise(self.out)


def summarise(raw: Path, top: int = 12) -> list[str]:
    """The hottest functions of a collapsed-stack file: the share of samples with each
    project function on the stack (inclusive), then the leaf frames (self)."""
    inclusive: collections.Counter[str] = collections.Counter()
    leaf: collections.Counter[str] = collections.Counter()
    total = 0
    for line in raw.read_text(errors="replace").splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = [_short(frame) for frame in stack.split(";")
                  if " (" in frame and not frame.startswith("process ")]
        if not frames:
            continue
        total += count
        for frame in set(frames):
            inclusive[frame] += count
        leaf[frames[-1]] += count
    if not total:
        return ["(no samples)"]
    ours = [(name, n) for name, n in inclusive.most_common() if _is_project(name)][:top]
    lines = [f"{total} samples. Project code, inclusive (share of samples on the stack):"]
    lines += [f"  {100 * n / total:5.1f}%  {name}" for name, n in ours]
    lines.append("Leaf frames (self):")
    lines += [f"  {100 * n / total:5.1f}%  {name}" for name, n in leaf.most_common(top)]
    return lines


PROJECT_PACKAGES = ("api/", "worker/", "shared/", "sunrise/", "bench/")


def _short(frame: str) -> str:
    """``run (celery/app/trace.py:451)`` -> ``run (celery/app/trace.py)``."""
    name, _, where = frame.partition(" (")
    return f"{name} ({where.rstrip(')').rsplit(':', 1)[0]})"


def _is_project(name: str) -> bool:
    return name.split(" (", 1)[1].startswith(PROJECT_PACKAGES)
