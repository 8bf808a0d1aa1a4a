"""One import process: builds one dataset version, in a process of its own.

Started by ``worker/datasets/import_process.py`` as ``python -m worker.datasets.import_child FD``
(``engine/child_process.py``). The protocol, pickled tuples over the socket pair:

- the parent sends one request: ``{"settings", "sources", "dataset_id", "version",
  "address_space_bytes", "corrections"}``; the child caps its address space and builds;
- while building, the child sends ``("progress", ImportProgress)`` (at most every
  ``PROGRESS_EVERY_S`` for a table still being read, and each table's last report);
- then one of ``("built", BuiltVersion)``, ``("failed", error class name, detail,
  extra)`` for an ``ImportFailed`` (bad input), ``("crashed", type name, message)``
  for anything else (its traceback goes to stderr, the worker's log), and exits.

A child that cannot go on (Python's ``MemoryError``) exits ``MEMORY_EXIT``; one whose
native code hit the address-space cap usually ends by SIGABRT. The parent reports
either as memory, and kills the child when it overruns or is no longer wanted.
"""
from __future__ import annotations

import logging
import sys
import time
import traceback
from multiprocessing.connection import Connection
from typing import Any

from engine.child_process import MEMORY_EXIT, connect, limit_address_space
from shared.config import Settings
from shared.errors import Conflict, ImportFailed

logger = logging.getLogger(__name__)

# At most this often a progress report of a table still being read goes to the parent.
PROGRESS_EVERY_S = 0.5


def build(settings: Settings, sources: list, dataset_id: str, version: int,
          on_progress: Any, corrections: dict | None = None) -> Any:
    """The one call of ``build_version`` for an import, its arguments from ``settings``
    and the dataset's ``corrections`` (``{table: {"columns": {column: {"type", "format"}},
    ...}}``, as stored).

    A version file left by a worker killed after its rename, before it recorded the
    version, was never served: it is removed and built again from the sources.
    """
    from engine.datasets import build_version, delete_version
    from engine.datasets.limits import ImportLimits

    def attempt() -> Any:
        return build_version(
            sources, settings.data_dir, dataset_id, version, on_progress,
            max_file_bytes=settings.max_upload_mb * 2**20,
            threads=settings.import_threads,
            memory_limit=settings.import_memory_limit,
            limits=ImportLimits.from_settings(settings),
            layouts={table: layout for table, c in (corrections or {}).items()
                     if (layout := {key: c[key] for key in ("header_row", "skip_footer")
                                    if c.get(key) is not None})},
            retypes={table: c["columns"] for table, c in (corrections or {}).items()
                     if c.get("columns")})

    try:
        return attempt()
    except Conflict:
        logger.warning("dataset %s v%s: an unrecorded file exists; rebuilding it",
                       dataset_id, version)
        delete_version(settings.data_dir, dataset_id, version)
        return attempt()


def main(fd: int) -> int:
    conn = connect(fd)
    request = conn.recv()
    limit_address_space(request["address_space_bytes"])
    try:
        built = build(request["settings"], request["sources"], request["dataset_id"],
                      request["version"], _progress_to(conn), request.get("corrections"))
    except ImportFailed as exc:
        conn.send(("failed", type(exc).__name__, exc.detail, exc.extra))
        return 0
    except MemoryError:
        return MEMORY_EXIT
    except Exception as exc:
        traceback.print_exc(file=sys.stderr)
        conn.send(("crashed", type(exc).__name__, str(exc)))
        return 1
    conn.send(("built", built))
    return 0


def _progress_to(conn: Connection) -> Any:
    last = [0.0]

    def progress(report: Any) -> None:
        now = time.monotonic()
        if report.done or now - last[0] >= PROGRESS_EVERY_S:
            last[0] = now
            conn.send(("progress", report))

    return progress


def _main_or_memory_exit(fd: int) -> int:
    try:
        return main(fd)
    except MemoryError:
        return MEMORY_EXIT


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    sys.exit(_main_or_memory_exit(int(sys.argv[1])))

