"""One heartbeat thread per worker process, beating for every job it is running.

A single batched UPDATE every ``interval_s`` keeps the cost flat however many jobs
a threads-pool worker holds (hundreds), instead of one thread and one query per job.
The reaper treats a job whose heartbeat is older than ``stale_after_s`` as abandoned.

A job may also be *watched* for its cancel flag (``watch``): a live dataset's query runs
on someone else's server, and a cancel must stop it there, not at the next round
boundary. Each beat then reads the flags of the watched jobs (one indexed SELECT, only
while any is watched) and calls a flagged job's callback once.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from shared import job_state
from shared.models import Job, utcnow

logger = logging.getLogger(__name__)


class Heartbeats:
    def __init__(self, sessions: sessionmaker[Session], *, interval_s: float):
        self.sessions = sessions
        self.interval_s = interval_s
        self._jobs: dict[str, int] = {}
        self._watched: dict[str, Callable[[], None]] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    def add(self, job_id: str, attempt: int) -> None:
        """Start beating for ``job_id`` (its current ``attempt``)."""
        with self._lock:
            self._jobs[job_id] = attempt
            if self._thread is None or not self._thread.is_alive():
                self._stop.clear()
                self._thread = threading.Thread(target=self._loop, name="sunrise-heartbeat",
                                                daemon=True)
                self._thread.start()

    def remove(self, job_id: str) -> None:
        with self._lock:
            self._jobs.pop(job_id, None)
            self._watched.pop(job_id, None)

    def watch(self, job_id: str, on_cancel: Callable[[], None]) -> None:
        """Call ``on_cancel`` (once) when a beat finds ``job_id``'s cancel requested."""
        with self._lock:
            self._watched[job_id] = on_cancel

    def stop(self) -> None:
        self._stop.set()

    def beat_once(self) -> int:
        """Refresh every tracked job still running under its attempt; returns rows touched."""
        with self._lock:
            pairs = list(self._jobs.items())
        if not pairs:
            return 0
        with self._lock:
            watched = list(self._watched)
        with self.sessions.begin() as s:
            touched = job_state.BEAT.apply(s.connection(), pairs=pairs, now=utcnow())
            flagged = s.scalars(select(Job.id).where(
                Job.id.in_(watched), Job.cancel_requested.is_(True))).all() if watched else ()
        for job_id in flagged:
            with self._lock:
                callback = self._watched.pop(job_id, None)
            if callback is not None:
                try:
                    callback()
                except Exception:
                    logger.warning("job %s: cancelling its query failed", job_id, exc_info=True)
        return touched

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.beat_once()
            except Exception:  # a missed beat is retried on the next tick
                logger.warning("heartbeat failed", exc_info=True)
