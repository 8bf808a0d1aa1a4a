"""Runs one dataset import end to end: claim, build the version, record it, announce it.

Callable without Celery (``DatasetImporter(settings).run(dataset_id, version)``). The
row's guarded transitions (``shared/dataset_state.py``) make a redelivered message or
a second worker harmless: one builder per version at a time, and a version is
recorded once. Progress (rows so far, table by table) goes to the import's event
stream, ending with ``ready`` or ``failed`` whose data is the dataset. A worker killed
mid-import leaves no version (``build_version`` is all or nothing); its message is
delivered again (late acks) or the reaper sends it again once the heartbeat is stale.
Each claim counts an attempt; after ``max_attempts`` the import fails (``give_up``)
instead of starting again. The build itself runs in an import process of its own
(``worker/datasets/import_process.py``): its memory is capped, it has a deadline, and it stops
when the dataset is deleted, so that no source can take the worker down with it.
"""
from __future__ import annotations

import datetime as dt
import logging
import threading
from pathlib import Path

from engine.datasets import (
    BuiltVersion,
    DatabaseSource,
    FileSource,
    ImportProgress,
    Source,
    remove_stale_builds,
)
from shared import dataset_state, tracing
from shared.config import Settings
from shared.dataset_view import corrections_of, dataset_to_dict
from shared.db import session_factory
from shared.errors import ImportAbandoned, ImportFailed
from shared.events import EventSink
from shared.logging_setup import log_context
from shared.models import Dataset, DatasetVersion, utcnow
from shared.outbound import OutboundPolicy
from shared.sealed import UnreadableSecret, unseal
from worker.datasets.import_process import NotWanted, WorkerStopping, run_import
from worker.datasets.live_import import LiveVersion, NotWantedAnyMore, run_introspection
from worker.datasets.versions import retire_versions

logger = logging.getLogger(__name__)


class ImportSlotsBusy(Exception):
    """Every import slot of this worker process is taken; nothing was claimed."""


class DatasetImporter:
    """Runs imports, at most ``import_concurrency`` at once in this worker process.

    The cap keeps imports from taking every thread of a worker that also answers chat.
    An import that finds no free slot is not claimed and not counted as an attempt: it
    raises ``ImportSlotsBusy`` at once, and the task sends its message again with a
    countdown and acknowledges this one (``worker/tasks.py``). Waiting for a slot
    instead would hold a Celery thread for as long as another import runs (up to the
    deadline), and failing it would lose an import no one did wrong.
    """

    def __init__(self, settings: Settings, events: EventSink):
        self.settings = settings
        self.sessions = session_factory(settings.database_url)
        self.events = events
        self._slots = threading.BoundedSemaphore(settings.import_concurrency)
        # What builds killed with an earlier worker process left behind (builder.py).
        remove_stale_builds(settings.data_dir)

    def run(self, dataset_id: str, version: int) -> str | None:
        """Build ``version`` of the dataset if this worker can claim it; returns the
        dataset's status afterwards, or None when it was not ours to build (or no longer
        wanted). Raises ``ImportSlotsBusy`` (nothing done), ``WorkerStopping`` (the
        claim released, to be done again)."""
        if not self._slots.acquire(blocking=False):
            raise ImportSlotsBusy(f"all {self.settings.import_concurrency} import slots "
                                  "of this worker are taken")
        try:
            with log_context(dataset_id=dataset_id), \
                    tracing.dataset_import(dataset_id, version) as span:
                status = self._run(dataset_id, version)
                tracing.record_outcome(span, status)
                return status
        finally:
            self._slots.release()

    def _run(self, dataset_id: str, version: int) -> str | None:
        stale = utcnow() - dt.timedelta(seconds=self.settings.stale_after_s)
        with self.sessions.begin() as s:
            if not dataset_state.CLAIM.apply(s, dataset_id=dataset_id, of_version=version,
                                             now=utcnow(), stale_before=stale,
                                             max_attempts=self.settings.max_attempts):
                claimed = None
            else:
                row = s.get(Dataset, dataset_id)
                claimed = (row.source_url, row.sources), dataset_state.import_stream(
                    dataset_id, row.import_seq), corrections_of(row)
                live = (row.mode == "live", bool(row.allow_writable_role))
        if claimed is None:
            if give_up(self.settings, self.sessions, self.events, dataset_id, version):
                return "failed"
            logger.info("dataset %s v%s: not ours to build (done, deleted or being built "
                        "elsewhere)", dataset_id, version)
            return None
        stored, stream, corrections = claimed
        logger.info("dataset %s: importing version %s", dataset_id, version)
        try:
            if live[0]:
                return self._introspect(stored, dataset_id, version, stream, live[1])
            built = self._build(self.sources_of(*stored), dataset_id, version, stream,
                                corrections)
        except ImportFailed as exc:
            return self._failed(dataset_id, version, stream, exc)
        except (NotWanted, NotWantedAnyMore):
            logger.info("dataset %s v%s: no longer wanted (deleted); import stopped",
                        dataset_id, version)
            return None
        except WorkerStopping:
            with self.sessions.begin() as s:
                dataset_state.RELEASE.apply(s, dataset_id=dataset_id, of_version=version,
                                            now=utcnow())
            logger.warning("dataset %s v%s: import stopped by the worker's shutdown; it is "
                           "done again", dataset_id, version)
            raise
        except Exception:
            # Not the data's fault; recorded as failed all the same, or the reaper
            # would send it again forever. (A killed worker raises nothing: resent.)
            logger.exception("dataset %s v%s: import crashed", dataset_id, version)
            return self._failed(dataset_id, version, stream, ImportFailed(
                "The import stopped on an internal error; it was logged. Try a refresh."))
        return self._ready(built, stream)

    def sources_of(self, source_url: str | None, sources: list[dict]) -> list[Source]:
        """A dataset row's sources as the engine takes them: files under the data dir,
        or the live database its sealed URL names (``shared/sealed.py``), under the
        outbound policy of the settings as they are now (the API checked the URL when it
        was given; the allow list or DNS may have changed since). Raises ImportFailed
        when no configured key opens that URL."""
        if source_url:
            try:
                url = unseal(self.settings.secret_keys, source_url)
            except UnreadableSecret as exc:
                raise ImportFailed(str(exc)) from None
            tables = next((s.get("tables") for s in sources if "url" in s), None)
            return [DatabaseSource(url, tuple(tables) if tables else None,
                                   OutboundPolicy.from_settings(self.settings))]
        return [FileSource(Path(self.settings.data_dir) / s["path"], s["file"])
                for s in sources]

    def _build(self, sources: list[Source], dataset_id: str, version: int,
               stream: str, corrections: dict) -> BuiltVersion:
        def progress(report: ImportProgress) -> None:
            self.events.publish(stream, "progress", {"version": version, **vars(report)})

        return run_import(self.settings, sources, dataset_id, version, on_progress=progress,
                          still_wanted=lambda: self._beat(dataset_id, version),
                          corrections=corrections)

    def _introspect(self, stored: tuple, dataset_id: str, version: int, stream: str,
                    allow_writable: bool) -> str:
        """A live dataset's version: its source introspected (``live_import.py``), no
        file; the dataset's status afterwards."""
        [source] = self.sources_of(*stored)
        live = run_introspection(self.settings, source.url, list(source.tables or ()) or None,
                                 allow_writable=allow_writable, dataset_id=dataset_id,
                                 version=version,
                                 still_wanted=lambda: self._beat(dataset_id, version))
        logger.info("dataset %s v%s: live source introspected (%d tables, %s %s)", dataset_id,
                    version, len(live.tables), live.engine["name"], live.engine["version"])
        return self._ready(live, stream)

    def _ready(self, built: BuiltVersion | LiveVersion, stream: str) -> str:
        with self.sessions.begin() as s:
            kinds = {table: source["kind"] for source in getattr(built, "sources", ())
                     for table in source.get("tables") or () if "kind" in source}
            s.merge(DatasetVersion(dataset_id=built.dataset_id, version=built.version,
                                   tables=[{**t.as_dict(), "source_kind": kinds.get(t.name)}
                                           for t in built.tables],
                                   rows=built.rows, seconds=built.seconds,
                                   engine=getattr(built, "engine", None)))
            if not dataset_state.READY.apply(s, dataset_id=built.dataset_id,
                                             of_version=built.version, now=utcnow()):
                logger.warning("dataset %s v%s built but no longer wanted (deleted?)",
                               built.dataset_id, built.version)
            row = s.get(Dataset, built.dataset_id)
            s.refresh(row)
            if row.version == built.version:
                row.warnings = list(getattr(built, "warnings", None) or []) or None
            view = dataset_to_dict(row, s.get(DatasetVersion, (row.id, row.version))
                                   if row.version else None)
        self.events.publish(stream, "ready", view)
        retire_versions(self.settings, self.sessions, built.dataset_id)
        return view["status"]

    def _failed(self, dataset_id: str, version: int, stream: str, exc: ImportFailed) -> str:
        with self.sessions.begin() as s:
            view = fail_import(s, dataset_state.FAIL, dataset_id, version, exc)
        logger.warning("dataset %s v%s import failed: %s", dataset_id, version, exc.detail)
        self.events.publish(stream, "failed", view)
        return view["status"]

    def _beat(self, dataset_id: str, version: int) -> bool:
        """Keep the claim's heartbeat fresh; False once the version is no longer being
        built (the dataset was deleted). A beat that fails is retried on the next tick."""
        try:
            with self.sessions.begin() as s:
                return bool(dataset_state.BEAT.apply(s, dataset_id=dataset_id,
                                                     of_version=version, now=utcnow()))
        except Exception:
            logger.warning("dataset %s: heartbeat failed", dataset_id, exc_info=True)
            return True


def fail_import(s, transition, dataset_id: str, version: int, exc: ImportFailed,
                **params) -> dict:
    """Apply ``transition`` (FAIL or GIVE_UP) with ``exc`` as the stored error, in the
    caller's transaction; the dataset's view afterwards (``status`` says whether the
    transition applied: still ``importing`` when it did not)."""
    row = s.get(Dataset, dataset_id)
    detail = exc.detail
    if row.version is not None:
        detail += f" Version {row.version} keeps serving."
    error = {"type": f"https://sunrise.dev/problems/{exc.code}", "title": exc.title,
             "code": exc.code, "detail": detail, "version": version, **exc.extra}
    transition.apply(s, dataset_id=dataset_id, of_version=version, error=error,
                     now=utcnow(), **params)
    s.refresh(row)
    return dataset_to_dict(row, s.get(DatasetVersion, (row.id, row.version))
                           if row.version else None)


def give_up(settings: Settings, sessions, events: EventSink, dataset_id: str,
            version: int) -> bool:
    """Fail the import of ``version`` if it has had its ``max_attempts`` (and no builder
    holds it), publishing its ``failed`` event; whether it did. Used when a redelivered
    message or the reaper would start one attempt too many."""
    stale = utcnow() - dt.timedelta(seconds=settings.stale_after_s)
    with sessions.begin() as s:
        row = s.get(Dataset, dataset_id)
        if row is None or row.building_version != version:
            return False
        exc = ImportAbandoned(dataset_state.abandoned_detail(row.import_attempts))
        stream = dataset_state.import_stream(dataset_id, row.import_seq)
        view = fail_import(s, dataset_state.GIVE_UP, dataset_id, version, exc,
                           stale_before=stale, max_attempts=settings.max_attempts)
    if view["status"] == "importing":
        return False
    logger.error("dataset %s v%s: import given up after %s attempts", dataset_id, version,
                 settings.max_attempts)
    events.publish(stream, "failed", view)
    return True
