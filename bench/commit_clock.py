"""The worker of figure 4, with a clock on each job's commit.

``celery -A bench.commit_clock worker`` runs the project's own worker app
(``worker.celery_app``) unchanged but for one note per job: when ``JobStore.finish``
returns, its transaction's COMMIT has returned, and the wall clock is read then; once
the job's end is announced (``JobRunner.complete`` has published it) the reading is
appended to the file named by ``SUNRISE_BENCH_COMMIT_LOG`` as ``<job id> <epoch s>``.
The note costs the measured path one ``time.time()``; the file is written after the
terminal event is out.

Figure 4 is "worker commit → client". The job's ``finished_at`` is stamped before the
finishing transaction's statements run, so a clock started there also counts the
transaction itself (its round trips and the commit); this one starts where the figure
says.
"""
from __future__ import annotations

import os
import threading
import time

from worker.jobs.runner import JobRunner
from worker.jobs.store import JobStore

LOG_ENV = "SUNRISE_BENCH_COMMIT_LOG"

_committed: dict[str, float] = {}
_write_lock = threading.Lock()
_finish, _complete = JobStore.finish, JobRunner.complete


def _noted_finish(self, job, outcome, trace=None):
    row = _finish(self, job, outcome, trace)
    _committed[job.id] = time.time()
    return row


def _noted_complete(self, job, *args, **kwargs):
    try:
        return _complete(self, job, *args, **kwargs)
    finally:
        at = _committed.pop(job.id, None)
        if at is not None:
            with _write_lock, open(os.environ[LOG_ENV], "a") as log:
                log.write(f"{job.id} {at:.6f}\n")


def read(path: str, job_id: str, timeout_s: float = 5.0) -> float:
    """When ``job_id``'s finishing transaction committed (epoch seconds), as the worker
    noted it in ``path``; waits up to ``timeout_s`` for the line (raises TimeoutError)."""
    deadline = time.monotonic() + timeout_s
    while True:
        if os.path.exists(path):
            with open(path) as log:
                for line in log:
                    noted_id, _, at = line.partition(" ")
                    if noted_id == job_id:
                        return float(at)
        if time.monotonic() > deadline:
            raise TimeoutError(f"the worker noted no commit for job {job_id}")
        time.sleep(0.01)


def __getattr__(name: str):
    if name == "app":  # only the worker process patches: importing this changes nothing
        from worker.celery_app import create_app

        JobStore.finish, JobRunner.complete = _noted_finish, _noted_complete
        return create_app()
    raise AttributeError(name)
