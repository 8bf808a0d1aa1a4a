"""A live dataset's "import": no copy, only what its jobs and prompt need to know.

Opens the source's engine (``engine.live``), judges its role (a role that can write is
refused unless the dataset allows it, then it carries a warning: ``shared/live_role.py``),
introspects the tables' schema and a profile computed on the engine from a bounded
sample (``SAMPLE_ROWS`` per table), and returns what a version records: the profiles,
the engine's name, version and dialect, and the warnings. Run by the import run
(``worker/datasets/import_run.py``) in a thread of its own, so that the claim's
heartbeat keeps beating and the import's deadline holds however slow the source is.
"""
from __future__ import annotations

import dataclasses
import logging
import queue
import threading
import time
from collections.abc import Callable

from engine.datasets import DatabaseSource, TableProfile
from engine.datasets.sources import source_database
from shared.config import Settings
from shared.errors import ImportTimedOut
from shared.live_role import judge_role
from shared.outbound import OutboundPolicy

logger = logging.getLogger(__name__)

# Rows per table the profile is computed from (on the engine).
SAMPLE_ROWS = 10_000


@dataclasses.dataclass(frozen=True)
class LiveVersion:
    """What one introspection found: the version's record, without a file."""

    dataset_id: str
    version: int
    tables: list[TableProfile]
    engine: dict[str, str]
    warnings: list[str]
    seconds: float

    @property
    def rows(self) -> int:
        return sum(t.rows for t in self.tables)


class NotWantedAnyMore(Exception):
    """The dataset no longer wants this version (deleted) while it was introspected."""


def introspect_source(settings: Settings, url: str, tables: list[str] | None, *,
                      allow_writable: bool, dataset_id: str, version: int) -> LiveVersion:
    """Open, judge the role, introspect, close; raises the ``ImportFailed`` family
    (``WritableRole``, ``SourceUnreachable``, ``MissingTables`` ...)."""
    from engine.live import LiveLimits, open_engine

    started = time.perf_counter()
    source = DatabaseSource(url, tuple(tables) if tables else None,
                            OutboundPolicy.from_settings(settings))
    engine = open_engine(url, outbound=source.outbound, limits=LiveLimits.from_settings(settings))
    try:
        privilege = engine.writable_privilege(list(tables) if tables else None)
        warnings = judge_role(privilege, display=source.display, kind=engine.name,
                              database=source_database(source),
                              allow_writable=allow_writable)
        profiles = engine.introspect(list(tables) if tables else None, sample_rows=SAMPLE_ROWS)
        record = engine.engine_info()  # the view shows it, the prompt names it
    finally:
        engine.close()
    return LiveVersion(dataset_id, version, profiles, record, warnings,
                       time.perf_counter() - started)


def run_introspection(settings: Settings, url: str, tables: list[str] | None, *,
                      allow_writable: bool, dataset_id: str, version: int,
                      still_wanted: Callable[[], bool]) -> LiveVersion:
    """``introspect_source`` in a thread, calling ``still_wanted`` every ``heartbeat_s``
    (it beats the claim); raises ``ImportTimedOut`` past ``import_deadline_s`` and
    ``NotWantedAnyMore`` when ``still_wanted`` says False (the thread is left to end on
    its own statement timeouts; its result is dropped)."""
    results: queue.Queue = queue.Queue(maxsize=1)

    def work() -> None:
        try:
            results.put(("ok", introspect_source(settings, url, tables,
                                                 allow_writable=allow_writable,
                                                 dataset_id=dataset_id, version=version)))
        except BaseException as exc:  # handed to the waiting thread
            results.put(("error", exc))

    threading.Thread(target=work, name=f"sunrise-introspect-{dataset_id}", daemon=True).start()
    deadline = time.monotonic() + settings.import_deadline_s
    while True:
        try:
            kind, value = results.get(timeout=max(0.05, min(settings.heartbeat_s,
                                                           deadline - time.monotonic())))
        except queue.Empty:
            if time.monotonic() >= deadline:
                raise ImportTimedOut(f"The introspection was stopped after "
                                     f"{settings.import_deadline_s:g} s, the longest an "
                                     "import may take.") from None
            if not still_wanted():
                raise NotWantedAnyMore() from None
            continue
        if kind == "ok":
            return value
        raise value
