"""Dataset use cases: create (files or a live database), list, describe, annotate and
correct (re-types, layouts: a new version), refresh, delete, follow an import (SSE). Every query is tenant-scoped: another tenant's dataset
is NotFound, exactly like an unknown one. Imports run on workers (``datasets`` queue);
here a dataset is committed ``importing`` and its import sent (``send_import``)."""
from __future__ import annotations

import hashlib
import logging
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import redis
from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from api.idempotency import after_race, body_hash, earlier
from api.links import dataset_event_data, linked_dataset
from api.pagination import after_cursor, page
from api.resources import Resources
from api.retype_check import check_retypes, plan_retypes
from api.schemas.datasets import DatasetCreate, DatasetPatch
from api.services.dataset_quota import check_room, tenant_usage
from api.services.live_sources import check_role_now
from api.sse import already_delivered, event_stream, stored_end
from api.sse_subscribers import subscriber_callbacks
from api.uploads import file_digest
from engine.datasets import DatabaseSource, FileSource
from engine.datasets.importers import importer_for
from shared import dataset_state
from shared.audit import record
from shared.dataset_annotations import Annotations, check_annotations
from shared.dataset_corrections import (
    LAYOUT_KINDS,
    check_corrections,
    corrections_changed,
    merge_table_patches,
)
from shared.dataset_view import annotations_of, dataset_to_dict
from shared.enqueue import send_import
from shared.errors import (
    BadRequest,
    Conflict,
    EmptySource,
    NotFound,
    UnsupportedSource,
    ValidationFailed,
)
from shared.models import Dataset, DatasetVersion, is_id, new_id, utcnow
from shared.outbound import OutboundPolicy
from shared.people_access import check_access, may_use
from shared.principal import Principal
from shared.refresh_schedule import RefreshSchedule
from shared.sealed import seal

logger = logging.getLogger(__name__)

SOURCES_DIR = "sources"


def _accepted(view: dict) -> dict:
    return {"dataset_id": view["dataset_id"], "status": "importing",
            "version": 1, "links": view["links"]}


def create_from_files(res: Resources, tenant_id: int, name: str, files,
                      idempotency_key: str | None = None) -> dict:
    """Keep the uploaded ``files`` (werkzeug FileStorage, spooled by ``api/uploads.py``)
    as the sources of a new dataset and send its first import.

    Every file is checked first (named, not empty, of a kind the engine reads); a bad
    one raises (ImportFailed family: 422/415) and nothing is kept. Past the tenant's
    quota (``dataset_quota.py``, the new files' bytes counted) it raises 429/413 and
    nothing is kept either. Raises
    ValidationFailed without files. With an ``idempotency_key`` already used for the
    same name and file contents, the first request's answer comes back and nothing is
    kept; with other ones, Conflict.
    """
    if not files:
        raise ValidationFailed("Send one or more files as 'file' parts.")
    dataset_id = new_id()
    folder = Path(res.settings.data_dir) / dataset_id / SOURCES_DIR
    checked = []
    for index, storage in enumerate(files):
        spooled = Path(storage.stream.name)
        storage.stream.flush()
        display = os.path.basename(storage.filename or "").strip()
        if not display:
            raise ValidationFailed(f"File part {index + 1} has no file name.")
        source = FileSource(spooled, display)
        if spooled.stat().st_size == 0:
            raise EmptySource(f"{display} is empty (0 bytes).", source=display)
        importer_for(source)  # raises UnsupportedSource naming what is supported
        checked.append((storage.stream, display,
                        f"{dataset_id}/{SOURCES_DIR}/{index}-{_safe(display)}"))
    digest = _files_hash(name, checked) if idempotency_key else None
    if idempotency_key and (first := _replay(res, tenant_id, idempotency_key, digest)):
        return first  # the spooled copies go with the request (api/uploads.py)
    with res.session() as s:
        check_room(s, res.settings, tenant_id, new_datasets=1,
                   new_bytes=sum(os.path.getsize(stream.name) for stream, _, _ in checked))
    folder.mkdir(parents=True, exist_ok=True)
    for stream, _, relative in checked:
        os.rename(stream.name, Path(res.settings.data_dir) / relative)
    sources = [{"file": display, "path": relative} for _, display, relative in checked]
    return _commit_new(res, tenant_id, dataset_id, name, sources, None, idempotency_key, digest)


def _files_hash(name: str, checked: list[tuple[IO[bytes], str, str]]) -> str:
    """What identifies an upload under its Idempotency-Key: the name, and each file's
    name and contents in order (hashed as the files were spooled)."""
    digest = hashlib.sha256(name.strip().encode())
    for stream, display, _ in checked:
        digest.update(f"|{display}|".encode() + file_digest(stream))
    return digest.hexdigest()


def _replay(res: Resources, tenant_id: int, key: str, digest: str) -> dict | None:
    """The answer the first request with ``key`` got, if there was one (Conflict when
    it sent something else)."""
    with res.session() as s:
        row = earlier(s, Dataset, tenant_id, key, digest)
        return _first_answer(s, row) if row else None


def _first_answer(_s, row: Dataset) -> dict:
    return _accepted(linked_dataset(dataset_to_dict(row, None)))


def create_from_database(res: Resources, tenant_id: int, body: DatasetCreate,
                         idempotency_key: str | None = None) -> dict:
    """A new dataset snapshotting a live database; its URL is kept for the import and
    refreshes, and never shown (``sources`` holds it masked). The URL is refused (422,
    SourceRefused, nothing kept) when it carries a parameter other than TLS ones, names
    no host, or a destination the outbound policy refuses (``shared/outbound.py``); 429/413
    past the tenant's quota. An ``idempotency_key`` works as for files, on the JSON
    body."""
    digest = body_hash(body) if idempotency_key else None
    if idempotency_key and (first := _replay(res, tenant_id, idempotency_key, digest)):
        return first
    source = DatabaseSource(body.source.url, tuple(body.source.tables or ()) or None,
                            OutboundPolicy.from_settings(res.settings))
    if not source.spark_connect:
        # Spark Connect (live only, the schema says) has no importer nor SQLAlchemy
        # driver: its engine checks the outbound policy as it opens, in check_role_now.
        _check_sqlalchemy_source(source)
    with res.session() as s:
        check_room(s, res.settings, tenant_id, new_datasets=1, new_bytes=1)
    live = {}
    if body.source.mode == "live":
        # The role is checked here when the source answers quickly (live_sources.py):
        # a writable one is a 422 now, nothing kept; else the import judges it.
        allow = body.source.allow_writable_role
        warnings = check_role_now(source, allow_writable=allow)
        live = {"mode": "live", "allow_writable_role": allow, "warnings": warnings or None}
    return _commit_new(res, tenant_id, new_id(), body.name, [source.as_dict()],
                       body.source.url, idempotency_key, digest, **live)


def _check_sqlalchemy_source(source: DatabaseSource) -> None:
    """Refuse, without keeping anything, a backend no importer reads or no driver here
    opens (415), and a URL or destination the outbound policy refuses (422)."""
    importer_for(source)
    try:
        source.parsed().get_dialect()
    except Exception:  # SQLAlchemy has no such driver here
        raise UnsupportedSource(f"{source.display}: no database driver for "
                                f"{source.parsed().drivername!r} here; use postgresql:// "
                                "or mysql:// (mariadb://).", source="url") from None
    source.check()


def _commit_new(res: Resources, tenant_id: int, dataset_id: str, name: str,
                sources: list[dict], url: str | None, idempotency_key: str | None,
                digest: str | None, **columns) -> dict:
    """Commit the new dataset ``importing`` (``columns``: its mode and live options)
    and send its first import."""
    try:
        with res.session() as s:
            row = Dataset(id=dataset_id, tenant_id=tenant_id, name=name.strip(),
                          status="importing", building_version=1, import_seq=1,
                          sources=sources, annotations={}, is_default=False,
                          source_url=seal(res.settings.secret_keys, url) if url else None,
                          idempotency_key=idempotency_key, request_hash=digest, **columns)
            s.add(row)
            s.flush()
            view = linked_dataset(dataset_to_dict(row, None))
    except IntegrityError:
        # The same key, committed by a concurrent request meanwhile: its dataset stands.
        shutil.rmtree(Path(res.settings.data_dir) / dataset_id, ignore_errors=True)
        return after_race(res.session, Dataset, tenant_id, idempotency_key, digest,
                          _first_answer, otherwise="A concurrent request made this dataset; "
                                                   "retry.")
    logger.info("dataset %s created for tenant %s (%d sources)", dataset_id, tenant_id,
                len(sources))
    send_import(res.celery, dataset_id, 1)
    return _accepted(view)


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)[-120:] or "file"


def _owned(s, tenant_id: int, dataset_id: str, *, lock: bool = False) -> Dataset:
    stmt = select(Dataset).where(Dataset.id == dataset_id, Dataset.tenant_id == tenant_id,
                                 Dataset.deleted_at.is_(None))
    row = s.scalar(stmt.with_for_update() if lock else stmt) if is_id(dataset_id) else None
    if row is None:
        raise NotFound(f"No dataset {dataset_id}.")
    return row


def _current(s, row: Dataset) -> DatasetVersion | None:
    return s.get(DatasetVersion, (row.id, row.version)) if row.version else None


def _view(s, row: Dataset, *, columns: bool = True) -> dict:
    return linked_dataset(dataset_to_dict(row, _current(s, row), columns=columns))


def list_datasets(res: Resources, tenant_id: int, *, limit: int, cursor: str | None,
                  principal: Principal | None = None) -> dict:
    """One page of the tenant's datasets, newest first: ``{"items", "next_cursor",
    "usage"}`` (keyset pagination, ``api/pagination.py``), tables without their columns
    (those are in ``get_dataset``), ``usage`` the tenant's quota use
    (``dataset_quota.py``). With ``principal`` only the datasets it may use are listed
    (a page may then hold fewer items). Raises BadRequest for a foreign cursor."""
    stmt = after_cursor(select(Dataset).where(Dataset.tenant_id == tenant_id,
                                              Dataset.deleted_at.is_(None)),
                        Dataset.created_at, Dataset.id, cursor)
    with res.session() as s:
        rows = s.scalars(stmt.limit(limit + 1)).all()
        listed = page(rows, limit, lambda d: (d.created_at, d.id),
                      lambda d: _view(s, d, columns=False))
        if principal is not None:
            usable = {d.id for d in rows if may_use(principal, d.access)}
            listed["items"] = [d for d in listed["items"] if d["dataset_id"] in usable]
        return {**listed, "usage": tenant_usage(s, res.settings, tenant_id).as_dict()}


def get_dataset(res: Resources, tenant_id: int, dataset_id: str) -> dict:
    with res.session() as s:
        return _view(s, _owned(s, tenant_id, dataset_id))


def check_usable(res: Resources, principal: Principal, dataset_id: str) -> None:
    """NotFound (as for an unknown id) unless ``principal`` may use the dataset."""
    if principal.is_admin:
        return
    with res.session() as s:
        if not may_use(principal, _owned(s, principal.tenant_id, dataset_id).access):
            raise NotFound(f"No dataset {dataset_id}.")


def set_access(res: Resources, tenant_id: int, dataset_id: str,
               access: dict[str, Any] | None, actor: str, user_id: int | None) -> dict | None:
    """Store the dataset's ``access`` (checked by ``shared.people_access.check_access``)
    and record the change in the audit log; returns the stored value."""
    stored = check_access(access)
    with res.session() as s:
        row = _owned(s, tenant_id, dataset_id, lock=True)
        before = row.access
        row.access = stored
        row.updated_at = utcnow()
        record(s, tenant_id, "dataset.access", actor=actor, user_id=user_id,
               target=dataset_id, details={"before": before, "after": stored})
    return stored


def patch_dataset(res: Resources, tenant_id: int, dataset_id: str,
                  body: DatasetPatch) -> tuple[dict, bool]:
    """Merge the annotations given (each key replaces its part; ``tables`` per table, see
    ``shared/dataset_corrections.py`` for re-types and layouts), set or clear ``default``
    and the ``refresh`` schedule; the dataset's view, and whether a new version is being
    made.

    Names are checked against the current version, each example's SQL is run in the
    SQL sandbox on it and each re-type on every value of its column: ValidationFailed
    (422) naming the unknown table or column, giving DuckDB's error, or the row and
    value that does not convert; a schedule is checked by ``shared/refresh_schedule.py``
    (422 naming ``refresh.cron`` or ``refresh.timezone``). A change of re-types or
    layouts then starts an import of the next version that applies them (the current
    one serves until it is ready). Conflict before the first version is ready when
    annotating (there is nothing to check against), and for a re-type or layout while
    an import runs or if a version arrived during the check; StorageQuotaExceeded (413)
    as for a refresh.
    """
    given = body.model_fields_set
    notes = given - NOT_ANNOTATIONS
    schedule = (RefreshSchedule.parse(body.refresh.cron, body.refresh.timezone)
                if "refresh" in given and body.refresh is not None else None)
    with res.session() as s:
        row = _owned(s, tenant_id, dataset_id)
        current = _current(s, row)
        before = annotations_of(row)
        merged = before.model_dump()
        for key in notes - {"tables"}:
            merged[key] = getattr(body, key) if key != "examples" else [
                e.model_dump() for e in body.examples]
        if "tables" in notes:
            merge_table_patches(merged, body.tables)
        annotations = Annotations.model_validate(merged)
        reimport = corrections_changed(merged["corrections"], before.model_dump()["corrections"])
        version, plans = None, {}
        if notes:
            if current is None:
                raise Conflict(f"Dataset {dataset_id} has no ready version to annotate yet.")
            check_annotations(annotations, current.tables)
            if reimport and row.mode == "live":
                raise ValidationFailed("A live dataset's columns have the types its source "
                                       "gives them: re-type or re-lay them out in a view on "
                                       "the source instead.")
            check_corrections(body.tables, current.tables, _database_tables(row, current))
            if reimport and row.building_version is not None:
                raise Conflict(f"Dataset {dataset_id} is importing version "
                               f"{row.building_version}; re-type or re-lay it out once that "
                               "import has ended.")
            plans = plan_retypes(body.tables, current.tables)
            version, path = row.version, res.settings.data_dir
    if version is not None and body.examples and "examples" in given:
        from api.example_check import check_examples

        check_examples(res.settings, path, dataset_id, version, body.examples)
    if plans:
        check_retypes(res.settings, path, dataset_id, version, plans)
    with res.session() as s:
        row = _owned(s, tenant_id, dataset_id, lock=True)
        if notes:
            if row.version != version:
                raise Conflict(f"Dataset {dataset_id} moved to version {row.version} while "
                               "this change was checked; send it again.")
            row.annotations = annotations.model_dump(exclude_defaults=True)
        if body.default is not None:
            if body.default and row.version is None:
                raise Conflict(f"Dataset {dataset_id} has no ready version yet; it can be "
                               "the default once its import has finished.")
            if body.default:
                s.execute(update(Dataset).where(Dataset.tenant_id == tenant_id,
                                                Dataset.id != dataset_id)
                          .values(is_default=False))
            row.is_default = body.default
        if "refresh" in given:
            set_schedule(row, schedule, utcnow())
        row.updated_at = utcnow()
        building = _start_import(s, res.settings, row) if reimport else None
        s.flush()
        view = _view(s, row)
    if building is not None:
        logger.info("dataset %s: corrections changed; importing version %s", dataset_id,
                    building)
        send_import(res.celery, dataset_id, building)
    return view, building is not None


def _database_tables(row: Dataset, current: DatasetVersion) -> set[str]:
    """The current version's tables that do not come from a CSV or Excel file (no layout
    to set); a version recorded before tables knew their source counts its dataset's."""
    return {t["name"] for t in current.tables
            if t.get("source_kind", "database" if row.source_url else None)
            not in (*LAYOUT_KINDS, None)}


def _start_import(s, settings, row: Dataset) -> int:
    """Start the import of the dataset's next version (REFRESH) in the caller's
    transaction, ``row`` locked; the version it builds. Raises as ``refresh_dataset``
    does."""
    check_room(s, settings, row.tenant_id, new_datasets=0, new_bytes=1)
    if not dataset_state.REFRESH.apply(s, dataset_id=row.id, now=utcnow()):
        raise Conflict(f"Dataset {row.id} is importing version "
                       f"{row.building_version} already; wait for it to end.")
    s.refresh(row)
    return row.building_version


# The PATCH keys that are not annotations.
NOT_ANNOTATIONS = frozenset({"default", "refresh", "access"})


def set_schedule(row: Dataset, schedule: RefreshSchedule | None, now) -> None:
    """Give ``row`` its refresh ``schedule`` (None: none), its next slot after ``now``."""
    row.refresh_cron = schedule.cron if schedule else None
    row.refresh_timezone = schedule.timezone if schedule else None
    row.next_refresh_at = schedule.next_after(now) if schedule else None


def refresh_dataset(res: Resources, tenant_id: int, dataset_id: str) -> dict:
    """Start a re-import of the same sources as the next version; the current version
    serves until it is ready. Conflict while an import runs; StorageQuotaExceeded (413)
    when the tenant's stored bytes leave no room for another version."""
    with res.session() as s:
        row = _owned(s, tenant_id, dataset_id, lock=True)
        version = _start_import(s, res.settings, row)
        view = _view(s, row)
    send_import(res.celery, dataset_id, version)
    return {**_accepted(view), "version": version}


def delete_dataset(res: Resources, tenant_id: int, dataset_id: str) -> None:
    """Delete the dataset: gone for clients at once; its files go once no queued or
    running job pins one of its versions (``worker/datasets/versions.py``)."""
    with res.session() as s:
        row = _owned(s, tenant_id, dataset_id, lock=True)
        row.deleted_at = utcnow()
        row.is_default = False
        row.building_version = None
    logger.info("dataset %s deleted by tenant %s", dataset_id, tenant_id)


def dataset_event_stream(res: Resources, tenant_id: int, dataset_id: str,
                         after: str) -> Iterator[str] | None:
    """SSE frames of the dataset's latest import after stream id ``after``: ``progress``
    reports, then ``ready`` or ``failed`` with the dataset. None (204) when the client
    has the end already. Raises NotFound."""
    with res.session() as s:
        row = _owned(s, tenant_id, dataset_id)
        stream = dataset_state.import_stream(row.id, row.import_seq)
        view = _view(s, row)
    log = res.dataset_events

    def terminal_from_db() -> tuple[str, dict] | None:
        with res.session() as s:
            latest = _owned(s, tenant_id, dataset_id)
            if latest.building_version is not None:
                return None
            return _ending(latest), _view(s, latest)

    if row.building_version is None:
        try:
            log.publish(stream, _ending(row), view)  # a no-op when it is there
            if already_delivered(log, stream, after):
                return None
        except redis.RedisError as exc:
            logger.warning("dataset %s: events unavailable (%s)", dataset_id, exc)
            return stored_end(_ending(row), view)
    max_s = 6 * 3600
    on_open, on_close = subscriber_callbacks(res.redis, max_s)
    return event_stream(log, stream, after, heartbeat_s=res.settings.sse_heartbeat_s,
                        max_s=max_s, terminal_from_db=terminal_from_db,
                        present=dataset_event_data, on_open=on_open, on_close=on_close,
                        hub=None if row.building_version is None else res.dataset_event_hub)


def _ending(row: Dataset) -> str:
    """The terminal event of a dataset's last import: failed when it left an error."""
    return "failed" if row.error else "ready"


def require_form_name(form) -> str:
    name = (form.get("name") or "").strip()
    if not name:
        raise ValidationFailed("Give the dataset a 'name' (a form field).")
    if len(name) > 200:
        raise ValidationFailed("The dataset 'name' is at most 200 characters.")
    return name


def reject_unknown_fields(form, files) -> None:
    # A part whose name werkzeug cannot read (no or a broken Content-Disposition name)
    # is keyed None: unknown too.
    unknown = sorted({f"'{k}'" for part, known in ((form, "name"), (files, "file"))
                      for k in part if k is not None and k != known})
    if None in form or None in files:
        unknown.append("a part without a readable name")
    if unknown:
        raise BadRequest(f"Unknown form fields: {', '.join(unknown)}; send 'name' and "
                         "'file' parts.")
