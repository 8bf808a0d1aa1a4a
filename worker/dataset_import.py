"""Runs one dataset import end to end: claim, build the version, record it, announce it.

Callable without Celery (``DatasetImporter(settings).run(dataset_id, version)``). The
row's guarded transitions (``shared/dataset_state.py``) make a redelivered message or
a second worker harmless: one builder per version at a time, and a version is
recorded once. Progress (rows so far, table by table) goes to the import's event
stream, ending with ``ready`` or ``failed`` whose data is the dataset. A worker killed
mid-import leaves no version (``build_version`` is all or nothing); its message is
delivered again (late acks) or the reaper sends it again once the heartbeat is stale.
"""
from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from pathlib import Path

from shared import dataset_state
from shared.config import Settings
from shared.dataset_view import dataset_to_dict
from shared.db import session_factory
from shared.errors import Conflict, ImportFailed
from shared.events import EventSink
from shared.logging_setup import log_context
from shared.models import Dataset, DatasetVersion, utcnow
from shared.sealed import UnreadableSecret, unseal
from worker.dataset_versions import retire_versions
from worker.datasets import (
    BuiltVersion,
    DatabaseSource,
    FileSource,
    ImportProgress,
    Source,
    build_version,
    delete_version,
    remove_stale_builds,
)
from worker.datasets.limits import ImportLimits

logger = logging.getLogger(__name__)

# At most this often a progress report of a table still being read reaches the stream.
PROGRESS_EVERY_S = 0.5


class DatasetImporter:
    def __init__(self, settings: Settings, events: EventSink):
        self.settings = settings
        self.sessions = session_factory(settings.database_url)
        self.events = events
        # What builds killed with an earlier worker process left behind (builder.py).
        remove_stale_builds(settings.data_dir)

    def run(self, dataset_id: str, version: int) -> str | None:
        """Build ``version`` of the dataset if this worker can claim it; returns the
        dataset's status afterwards, or None when it was not ours to build."""
        with log_context(dataset_id=dataset_id):
            stale = utcnow() - dt.timedelta(seconds=self.settings.stale_after_s)
            with self.sessions.begin() as s:
                if not dataset_state.CLAIM.apply(s, dataset_id=dataset_id, of_version=version,
                                                 now=utcnow(), stale_before=stale):
                    logger.info("dataset %s v%s: not ours to build (done, deleted or being "
                                "built elsewhere)", dataset_id, version)
                    return None
                row = s.get(Dataset, dataset_id)
                stored, stream = (row.source_url, row.sources), dataset_state.import_stream(
                    dataset_id, row.import_seq)
            logger.info("dataset %s: importing version %s", dataset_id, version)
            beating = self._beat(dataset_id, version)
            try:
                built = self._build(self.sources_of(*stored), dataset_id, version, stream)
            except ImportFailed as exc:
                return self._failed(dataset_id, version, stream, exc)
            except Exception:
                # Not the data's fault; recorded as failed all the same, or the reaper
                # would send it again forever. (A killed worker raises nothing: resent.)
                logger.exception("dataset %s v%s: import crashed", dataset_id, version)
                return self._failed(dataset_id, version, stream, ImportFailed(
                    "The import stopped on an internal error; it was logged. Try a refresh."))
            finally:
                beating.set()
            return self._ready(built, stream)

    def sources_of(self, source_url: str | None, sources: list[dict]) -> list[Source]:
        """A dataset row's sources as the engine takes them: files under the data dir,
        or the live database its sealed URL names (``shared/sealed.py``). Raises
        ImportFailed when no configured key opens that URL."""
        if source_url:
            try:
                url = unseal(self.settings.secret_keys, source_url)
            except UnreadableSecret as exc:
                raise ImportFailed(str(exc)) from None
            tables = next((s.get("tables") for s in sources if "url" in s), None)
            return [DatabaseSource(url, tuple(tables) if tables else None)]
        return [FileSource(Path(self.settings.data_dir) / s["path"], s["file"])
                for s in sources]

    def _build(self, sources: list[Source], dataset_id: str, version: int,
               stream: str) -> BuiltVersion:
        last = [0.0]

        def progress(report: ImportProgress) -> None:
            now = time.monotonic()
            if report.done or now - last[0] >= PROGRESS_EVERY_S:
                last[0] = now
                self.events.publish(stream, "progress", {"version": version, **vars(report)})

        def build() -> BuiltVersion:
            return build_version(
                sources, self.settings.data_dir, dataset_id, version, progress,
                max_file_bytes=self.settings.max_upload_mb * 2**20,
                threads=self.settings.import_threads,
                memory_limit=self.settings.import_memory_limit,
                limits=ImportLimits.from_settings(self.settings))

        try:
            return build()
        except Conflict:
            # A worker killed after its rename, before recording the version: the file
            # was never served, so it is built again from the sources.
            logger.warning("dataset %s v%s: an unrecorded file exists; rebuilding it",
                           dataset_id, version)
            delete_version(self.settings.data_dir, dataset_id, version)
            return build()

    def _ready(self, built: BuiltVersion, stream: str) -> str:
        with self.sessions.begin() as s:
            s.merge(DatasetVersion(dataset_id=built.dataset_id, version=built.version,
                                   tables=[t.as_dict() for t in built.tables],
                                   rows=built.rows, seconds=built.seconds))
            if not dataset_state.READY.apply(s, dataset_id=built.dataset_id,
                                             of_version=built.version, now=utcnow()):
                logger.warning("dataset %s v%s built but no longer wanted (deleted?)",
                               built.dataset_id, built.version)
            row = s.get(Dataset, built.dataset_id)
            s.refresh(row)
            view = dataset_to_dict(row, s.get(DatasetVersion, (row.id, row.version))
                                   if row.version else None)
        self.events.publish(stream, "ready", view)
        retire_versions(self.settings, self.sessions, built.dataset_id)
        return view["status"]

    def _failed(self, dataset_id: str, version: int, stream: str, exc: ImportFailed) -> str:
        with self.sessions.begin() as s:
            row = s.get(Dataset, dataset_id)
            detail = exc.detail
            if row.version is not None:
                detail += f" Version {row.version} keeps serving."
            error = {"type": f"https://sunrise.dev/problems/{exc.code}", "title": exc.title,
                     "code": exc.code, "detail": detail, "version": version, **exc.extra}
            dataset_state.FAIL.apply(s, dataset_id=dataset_id, of_version=version, error=error,
                                     now=utcnow())
            s.refresh(row)
            view = dataset_to_dict(row, s.get(DatasetVersion, (row.id, row.version))
                                   if row.version else None)
        logger.warning("dataset %s v%s import failed: %s", dataset_id, version, exc.detail)
        self.events.publish(stream, "failed", view)
        return view["status"]

    def _beat(self, dataset_id: str, version: int) -> threading.Event:
        """Keep the claim's heartbeat fresh while building; set the event to stop."""
        stop = threading.Event()

        def loop() -> None:
            while not stop.wait(self.settings.heartbeat_s):
                try:
                    with self.sessions.begin() as s:
                        dataset_state.BEAT.apply(s, dataset_id=dataset_id, of_version=version,
                                                 now=utcnow())
                except Exception:  # a missed beat is retried on the next tick
                    logger.warning("dataset %s: heartbeat failed", dataset_id, exc_info=True)

        threading.Thread(target=loop, name=f"import-heartbeat-{dataset_id}", daemon=True).start()
        return stop

