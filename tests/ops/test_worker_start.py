"""Waiting for a worker process to start (bench/worker_fleet.py ``wait_ready``): bounded
by its progress, not one wall-clock figure. A worker that starts answers; one that makes
no progress (here: stopped by SIGSTOP) fails well before the wall-clock bound, saying
how far it got and what it cost."""
from __future__ import annotations

import os
import signal
import time

import pytest

from bench.worker_fleet import READY_WITHIN_S, WorkerProcess


def test_a_starting_worker_is_waited_for_until_it_answers(ops_settings, tmp_path):
    worker = WorkerProcess(ops_settings, tmp_path, concurrency=1)
    try:
        took = worker.wait_ready()
        assert 0 < took < READY_WITHIN_S
        print(f"worker ready in {took:.1f} s (load {os.getloadavg()[0]:.1f})")
    finally:
        worker.stop(timeout=30)


def test_a_worker_that_makes_no_progress_fails_the_wait_early(ops_settings, tmp_path):
    worker = WorkerProcess(ops_settings, tmp_path, concurrency=1)
    os.kill(worker.pid, signal.SIGSTOP)  # alive, but neither computing nor logging
    started = time.monotonic()
    try:
        with pytest.raises(RuntimeError) as failed:
            worker.wait_ready(stalled_s=3)
        assert time.monotonic() - started < 30, "the stall ended the wait, not the bound"
        message = str(failed.value)
        assert "without progress" in message and "CPU-s" in message, message
        assert "load average" in message and "still importing" in message, message
    finally:
        os.kill(worker.pid, signal.SIGCONT)
        worker.proc.kill()
        worker.wait(10)
