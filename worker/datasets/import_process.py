"""The worker's end of one import process (``worker/datasets/import_child.py``): start it, pass on
its progress, keep the claim's heartbeat, and kill it when it overruns, is no longer
wanted, or the worker stops.

Why a process: an import reads tenant-named files with native libraries whose memory
no setting bounds (a 1.5 KB .xlsx naming cell XFD1048576 made the Excel reader ask
for 549 GB, and Rust aborted the whole worker with every chat job in it). In a child
whose address space is capped (``import_max_memory``) such an allocation ends the
child, and the worker reports it and goes on. A child is also something the worker
can stop: at the deadline (``import_deadline_s``), when the dataset is deleted, and
at the worker's warm shutdown (``stop_all``), where waiting for the deadline would
hold a deploy for half an hour.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from celery import signals

from engine.child_process import describe_exit, end_child, ran_out_of_memory, start_child
from engine.datasets import remove_stale_builds
from engine.sql.sandbox import ADDRESS_SPACE_HEADROOM, parse_size
from shared import errors
from shared.config import Settings
from shared.errors import ImportFailed, ImportOutOfMemory, ImportTimedOut

logger = logging.getLogger(__name__)


class NotWanted(Exception):
    """The import's dataset no longer wants this version (deleted); nothing was kept."""


class WorkerStopping(Exception):
    """The worker is shutting down: the import was stopped to be done again later."""


def address_space_bytes(settings: Settings) -> int:
    """The address-space cap of an import process: ``import_max_memory``, else DuckDB's
    own ``import_memory_limit`` plus room for the interpreter and the readers."""
    if settings.import_max_memory:
        return parse_size(settings.import_max_memory)
    return parse_size(settings.import_memory_limit) + ADDRESS_SPACE_HEADROOM


def run_import(settings: Settings, sources: list, dataset_id: str, version: int, *,
               on_progress: Callable[[Any], None], still_wanted: Callable[[], bool],
               corrections: dict | None = None) -> Any:
    """Build ``version`` in an import process and return its ``BuiltVersion``.

    ``corrections`` are the dataset's (``shared/dataset_corrections.py``, as stored), which
    the build applies.

    ``on_progress`` gets the child's ``ImportProgress`` reports; ``still_wanted`` is
    called every ``heartbeat_s`` (it beats the claim) and a False stops the build.
    Raises the ``ImportFailed`` family (the child's own, ``ImportTimedOut`` at the
    deadline, ``ImportOutOfMemory`` or ``ImportFailed`` when the child died),
    ``NotWanted``, ``WorkerStopping``. The child is gone when this returns or raises.
    """
    proc, conn = start_child("worker.datasets.import_child")
    with _LOCK:
        _RUNNING.add(proc)
    started = time.monotonic()
    deadline = started + settings.import_deadline_s
    next_beat = started + settings.heartbeat_s
    try:
        conn.send({"settings": settings, "sources": sources, "dataset_id": dataset_id,
                   "version": version, "address_space_bytes": address_space_bytes(settings),
                   "corrections": corrections or {}})
        while True:
            now = time.monotonic()
            if now >= deadline:
                raise ImportTimedOut(
                    f"The import was stopped after {settings.import_deadline_s:g} s, the "
                    "longest an import may take; import less, or a faster source.")
            if now >= next_beat:
                if not still_wanted():
                    raise NotWanted()
                next_beat = now + settings.heartbeat_s
            if not conn.poll(max(0.0, min(deadline, next_beat) - now)):
                continue
            try:
                message = conn.recv()
            except (EOFError, OSError):
                raise _ended(proc, _STOPPING.is_set()) from None
            kind = message[0]
            if kind == "progress":
                on_progress(message[1])
            elif kind == "built":
                return message[1]
            elif kind == "failed":
                raise _reported(*message[1:])
            else:
                logger.error("dataset %s v%s: the import process crashed: %s: %s",
                             dataset_id, version, message[1], message[2])
                raise ImportFailed("The import stopped on an internal error; it was logged. "
                                   "Try a refresh.")
    finally:
        with _LOCK:
            _RUNNING.discard(proc)
        if end_child(proc, conn) != 0:  # killed: its build files were left behind
            remove_stale_builds(settings.data_dir, dataset_id)


def stop_all() -> None:
    """Kill every running import process of this worker process (warm shutdown): their
    imports raise ``WorkerStopping`` at once instead of running to their deadline."""
    _STOPPING.set()
    with _LOCK:
        running = list(_RUNNING)
    for proc in running:
        if proc.poll() is None:
            proc.kill()


def install_import_shutdown(app) -> None:
    """At the worker's warm shutdown (SIGTERM), stop its imports (``stop_all``) so that
    the shutdown waits for chat jobs only; each stopped import is handed back to the
    queue and done again by another worker."""
    def on_shutting_down(**_kw) -> None:
        stop_all()

    signals.worker_shutting_down.connect(on_shutting_down, weak=False,
                                         dispatch_uid=f"sunrise-{id(app)}-imports")


def _ended(proc, stopping: bool) -> Exception:
    try:
        code = proc.wait(10)
    except Exception:
        code = proc.poll()
    if stopping:
        return WorkerStopping(describe_exit(code))
    how = describe_exit(code)
    if ran_out_of_memory(code):
        return ImportOutOfMemory(
            f"The import needed more memory than an import may use (its process ended: "
            f"{how}); import a smaller file, or fewer tables at once.")
    return ImportFailed(f"The import's process ended unexpectedly ({how}); it was logged. "
                        "Try a refresh.")


def _reported(class_name: str, detail: str, extra: dict) -> ImportFailed:
    kind = getattr(errors, class_name, None)
    if not (isinstance(kind, type) and issubclass(kind, ImportFailed)):
        kind = ImportFailed
    return kind(detail, **extra)


# The running children and the shutdown flag: a set, a lock and an event are no resources.
_LOCK = threading.Lock()
_RUNNING: set = set()
_STOPPING = threading.Event()
