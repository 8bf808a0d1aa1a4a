"""A worker process's live engines, and a job's handle on one.

A live dataset's jobs run their SQL on the source (``engine.live``). This process keeps
one engine per (dataset, version) open for every job thread (its connections are
pooled inside it), and closes an engine nobody has used for ``idle_close_s``: the
source sees no connection from a worker with nothing to ask it. A job holds a
``LiveQueries``, whose ``run`` is the sandbox's ``run`` for the SQL tool, tagged with
the job's id: a cancelled job cancels the query it is running on the engine
(``JobRunner`` calls ``cancel`` when the heartbeat sees the job's cancel flag). The
first query a job runs is the moment its data is from (``data_as_of``).

At the worker's shutdown every engine of the process is closed (``close_all``,
connected by ``install_live_shutdown``): a source sees the worker's sessions end, and
a Spark Connect client is not left to call a server again at interpreter exit.
"""
from __future__ import annotations

import logging
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

from celery import signals

from engine.datasets import TableProfile
from engine.sql.query_result import QueryResult
from shared.errors import SunriseError
from shared.models import utcnow

logger = logging.getLogger(__name__)

IDLE_CLOSE_S = 300.0
# How long the worker's exit waits for its engines to close (a source that no longer
# answers must not hold it).
SHUTDOWN_CLOSE_S = 5.0

Key = tuple[str, int]


class LiveEngines:
    """The open engines of this process. ``opener(key, url)`` opens one (it may raise the
    ``ImportFailed`` family: an unreachable source fails the job that asked)."""

    def __init__(self, opener: Callable[[Key, str], Any], *, idle_close_s: float = IDLE_CLOSE_S,
                 clock: Callable[[], float] = time.monotonic):
        self.opener = opener
        self.idle_close_s = idle_close_s
        self.clock = clock
        self._lock = threading.Lock()
        self._open: dict[Key, Any] = {}
        self._users: dict[Key, int] = {}
        self._last_used: dict[Key, float] = {}
        self._running: dict[str, Key] = {}  # job id -> the engine its query runs on
        _EVERY.add(self)

    def acquire(self, key: Key, url: str) -> Any:
        """The engine of ``key``, opened with ``url`` if it is not open; hold it until
        ``release``. Closes engines idle past ``idle_close_s`` on the way."""
        self.close_idle()
        with self._lock:
            engine = self._open.get(key)
            if engine is not None:
                self._users[key] += 1
                return engine
        opened = self.opener(key, url)  # outside the lock: it connects
        with self._lock:
            engine = self._open.setdefault(key, opened)
            self._users[key] = self._users.get(key, 0) + 1
        if engine is not opened:  # another thread opened it meanwhile
            opened.close()
        return engine

    def release(self, key: Key, engine: Any = None) -> None:
        """Give back a hold taken by ``acquire`` on ``engine``. One closed meanwhile
        (``close`` at a cold shutdown), or closed and opened again under the same key,
        is not counted down: its hold ended with it."""
        with self._lock:
            if key not in self._users or (engine is not None
                                          and self._open.get(key) is not engine):
                return
            self._users[key] -= 1
            self._last_used[key] = self.clock()

    def run(self, key: Key, url: str, job_id: str, sql: str, **kwargs: Any) -> QueryResult:
        """Run ``sql`` for ``job_id`` on the engine of ``key``, tagged with the job's id;
        a source that cannot be reopened (its engine was closed idle) is a failed result
        saying why, as any SQL problem is."""
        started = time.perf_counter()
        try:
            engine = self.acquire(key, url)
        except SunriseError as exc:
            return QueryResult.failed(sql, exc.detail, (time.perf_counter() - started) * 1000)
        with self._lock:
            self._running[job_id] = key
        try:
            return engine.run(sql, tag=job_id, **kwargs)
        finally:
            with self._lock:
                self._running.pop(job_id, None)
            self.release(key, engine)

    def cancel(self, job_id: str, key: Key | None = None) -> bool:
        """Cancel ``job_id``'s query on its engine (the one running now, else on
        ``key``'s open engine, which then refuses the job's next query); whether an
        engine was told."""
        with self._lock:
            key = self._running.get(job_id, key)
            engine = self._open.get(key) if key is not None else None
        if engine is None:
            return False
        engine.cancel(job_id)
        logger.info("job %s: its query was cancelled on the source", job_id)
        return True

    def close_idle(self) -> int:
        """Close the engines no job holds and none used for ``idle_close_s``."""
        now = self.clock()
        with self._lock:
            idle = [key for key, engine in self._open.items() if not self._users.get(key)
                    and now - self._last_used.get(key, now) >= self.idle_close_s]
            closing = [self._forget(key) for key in idle]
        for engine in closing:
            _close(engine)
        return len(closing)

    def close(self) -> None:
        """Close every open engine; a later ``acquire`` opens it again."""
        with self._lock:
            closing = [self._forget(key) for key in list(self._open)]
        for engine in closing:
            _close(engine)

    def _forget(self, key: Key) -> Any:
        self._users.pop(key, None)
        self._last_used.pop(key, None)
        return self._open.pop(key)


def close_all(timeout_s: float = SHUTDOWN_CLOSE_S) -> bool:
    """Close every ``LiveEngines`` of this process (the worker's shutdown), in a daemon
    thread waited for at most ``timeout_s``: a close that blocks (a source gone
    silent) is logged and left behind, not waited for. Whether all closed in time."""
    closing = list(_EVERY)
    if not closing:
        return True
    thread = threading.Thread(target=lambda: [engines.close() for engines in closing],
                              daemon=True, name="live-engines-close")
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        logger.warning("live engines not closed within %.0f s at shutdown; left open",
                       timeout_s)
        return False
    logger.info("live engines closed at shutdown")
    return True


def install_live_shutdown(app) -> None:
    """At the worker's shutdown (after its tasks ended) and a pool process's end, close
    the process's live engines (``close_all``) and let its last query slots go back."""
    def on_shutdown(**_kw) -> None:
        from engine.live import wait_for_releases  # (engine.live is heavy to import)

        close_all()
        # Query slots are given back from a thread; let the last ones reach Redis
        # (bounded: a lease left behind expires by itself).
        wait_for_releases(1.0)

    uid = f"sunrise-{id(app)}-live"
    signals.worker_shutdown.connect(on_shutdown, weak=False, dispatch_uid=uid)
    signals.worker_process_shutdown.connect(on_shutdown, weak=False, dispatch_uid=f"{uid}-process")


# Every LiveEngines of this process, for close_all; a weak set is no resource.
_EVERY: weakref.WeakSet[LiveEngines] = weakref.WeakSet()


def _close(engine: Any) -> None:
    try:
        engine.close()
    except Exception:
        logger.warning("closing a live engine failed", exc_info=True)


class LiveQueries:
    """A job's handle on its live dataset version: ``run`` as the SQL sandbox's (the
    tool's text and charts need nothing else), the schema from the version's profile."""

    def __init__(self, engines: LiveEngines, key: Key, url: str, job_id: str,
                 tables: list[TableProfile]):
        self.engines = engines
        self.key = key
        self._url = url
        self.job_id = job_id
        self.tables = tables
        self.first_query_at = None

    def run(self, sql: str, **kwargs: Any) -> QueryResult:
        if self.first_query_at is None:
            self.first_query_at = utcnow()
        return self.engines.run(self.key, self._url, self.job_id, sql, **kwargs)

    def describe_schema(self) -> list[tuple[str, list[tuple[str, str]]]]:
        return [(t.name, [(c.name, c.type) for c in t.columns]) for t in self.tables]

    def data_years(self) -> frozenset[int]:
        """The years the profile's temporal and year columns span (its min and max, from
        the introspection's sample): no query on the source for them."""
        from worker.answer.data_years import profile_years

        return profile_years(self.tables)

    def __repr__(self) -> str:  # never the URL
        return f"LiveQueries(dataset={self.key[0]}, version={self.key[1]}, job={self.job_id})"
