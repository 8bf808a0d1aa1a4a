"""Building one immutable dataset version: one DuckDB file, all or nothing.

Layout under the data dir (``SUNRISE_DATA_DIR``)::

    <data_dir>/<dataset_id>/v<version>.duckdb                                 a built version
    <data_dir>/<dataset_id>/.v<version>.<host>.<pid>.<nonce>.building.duckdb  being built
                                                        (+ DuckDB's .wal, a .spill and a .scratch dir)

A version is written under the temporary name and renamed when complete (a rename in
one directory is atomic), so a reader sees a whole version or none. A failed import
removes its temporary files before the error leaves ``build_version``; an import
interrupted in-process (KeyboardInterrupt, a task time limit) does too. One whose
process was killed outright leaves them behind, and the next build of that dataset,
or ``remove_stale_builds`` at worker start, removes them: on the same host when that
process is gone, from other hosts after ``STALE_AFTER_S``.
"""
from __future__ import annotations

import contextlib
import logging
import os
import re
import secrets
import shutil
import socket
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from engine.datasets.importers import importer_for
from engine.datasets.importers.base import duckdb_message
from engine.datasets.limits import ImportLimits
from engine.datasets.meaning import read_as_meant
from engine.datasets.profile import TableProfile, profile_tables
from engine.datasets.retype import apply_retypes
from engine.datasets.sources import FileSource, Source
from engine.datasets.target import ImportTarget, ProgressCallback
from shared.errors import Conflict, EmptySource, ImportFailed, SourceTooLarge

logger = logging.getLogger(__name__)

STALE_AFTER_S = 24 * 3600
_DATASET_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")
_BUILDING = re.compile(r"^\.v\d+\.(?P<host>[^.]+)\.(?P<pid>\d+)\.[0-9a-f]+\.building\.duckdb")


@dataclass(frozen=True)
class BuiltVersion:
    """A complete version: its file, its tables' profiles (sorted by name) and which source
    made which tables (sources as ``FileSource.as_dict``/``DatabaseSource.as_dict``:
    no credentials, with the importer's ``kind`` and the ``tables`` it made)."""

    dataset_id: str
    version: int
    path: Path
    tables: tuple[TableProfile, ...]
    sources: tuple[dict, ...]
    seconds: float

    @property
    def rows(self) -> int:
        return sum(t.rows for t in self.tables)


def version_path(data_dir: str | Path, dataset_id: str, version: int) -> Path:
    """Where version ``version`` of ``dataset_id`` lives; raises ``ValueError`` on a bad id."""
    if not _DATASET_ID.match(dataset_id) or version < 1:
        raise ValueError(f"not a dataset id and version: {dataset_id!r}, {version!r}")
    return Path(data_dir) / dataset_id / f"v{version}.duckdb"


def build_version(sources: Sequence[Source], data_dir: str | Path, dataset_id: str,
                  version: int, on_progress: ProgressCallback | None = None, *,
                  max_file_bytes: int | None = None, threads: int | None = None,
                  memory_limit: str | None = None,
                  limits: ImportLimits | None = None,
                  layouts: Mapping[str, Mapping] | None = None,
                  retypes: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None,
                  ) -> BuiltVersion:
    """Import ``sources`` into a new version file and profile it; all or nothing.

    Every source is checked (supported, not empty, at most ``max_file_bytes``) before
    anything is written. ``on_progress`` receives ``ImportProgress`` reports (see
    ``target``). ``limits`` (default ``ImportLimits()``) caps what the import reads.
    ``layouts`` maps a table's name to a person's correction of its layout,
    ``{"header_row": N, "skip_footer": M}`` (see ``ImportTarget.layout_for``).
    ``retypes`` (``{table: {column: {"type", "format"}}}``, a person's corrections) are
    applied once every source is in (``retype.apply_retypes``); a value that does not
    convert fails the import naming its row.
    Raises the ``ImportFailed`` family for bad input, ``Conflict`` if
    the version exists already (versions are immutable), ``ValueError`` for a bad id.
    On any failure no file of this attempt remains.
    """
    final = version_path(data_dir, dataset_id, version)
    if final.exists():
        raise Conflict(f"Dataset {dataset_id} version {version} exists already; "
                       "versions are immutable.")
    if not sources:
        raise EmptySource("Nothing to import: give at least one file or database.")
    plan = [(source, importer_for(source)) for source in sources]
    for source, _ in plan:
        if isinstance(source, FileSource):
            _check_file(source, max_file_bytes)
    final.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_builds(data_dir, dataset_id)
    building = final.parent / (f".v{version}.{_host()}.{os.getpid()}."
                               f"{secrets.token_hex(4)}.building.duckdb")
    started = time.perf_counter()
    try:
        con = duckdb.connect(str(building), config=_config(building, threads, memory_limit))
        try:
            # Progress is tracked only when asked for (outside a terminal); never printed.
            con.execute("SET enable_progress_bar = true")
            con.execute("SET enable_progress_bar_print = false")
            target = ImportTarget(con, on_progress, limits=limits,
                                  scratch=Path(f"{building}.scratch"), layouts=layouts)
            made = []
            for source, importer in plan:
                first = len(target.tables)
                _load(importer, source, target)
                if not importer.types_declared:
                    read_as_meant(target, target.tables[first:])
                made.append({**source.as_dict(), "kind": importer.kind,
                             "tables": target.tables[first:]})
            if retypes:
                apply_retypes(target, retypes)
            profiles = tuple(profile.with_notes(target.notes.get(profile.name))
                             for profile in profile_tables(con, target.tables))
            con.execute("CHECKPOINT")
        finally:
            con.close()
        _publish(building, final)
    except BaseException:
        _remove_build_files(building)
        raise
    seconds = time.perf_counter() - started
    logger.info("dataset %s version %s built: %s tables, %s rows in %.1f s", dataset_id,
                version, len(profiles), sum(t.rows for t in profiles), seconds)
    return BuiltVersion(dataset_id, version, final, profiles, tuple(made), round(seconds, 3))


def delete_version(data_dir: str | Path, dataset_id: str, version: int) -> bool:
    """Remove a version's file (when no job uses it any more); whether it existed."""
    path = version_path(data_dir, dataset_id, version)
    with contextlib.suppress(FileNotFoundError):
        path.with_name(path.name + ".wal").unlink()
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True


def remove_stale_builds(data_dir: str | Path, dataset_id: str | None = None) -> list[Path]:
    """Remove what killed builds left behind (see the module docstring); the paths removed."""
    root = Path(data_dir)
    folders = [root / dataset_id] if dataset_id else [p for p in _listdir(root) if p.is_dir()]
    removed = []
    for folder in folders:
        for path in _listdir(folder):
            match = _BUILDING.match(path.name)
            if match and _abandoned(match["host"], int(match["pid"]), path):
                _remove_path(path)
                removed.append(path)
    if removed:
        logger.warning("removed %s files left by interrupted dataset builds", len(removed))
    return removed


def _check_file(source: FileSource, max_file_bytes: int | None) -> None:
    try:
        size = source.path.stat().st_size
    except OSError as exc:
        raise ImportFailed(f"{source.name} cannot be read: {exc.strerror}.",
                           source=source.name) from None
    if size == 0:
        raise EmptySource(f"{source.name} is empty (0 bytes).", source=source.name)
    if max_file_bytes is not None and size > max_file_bytes:
        raise SourceTooLarge(f"{source.name} is {size / 2**20:,.1f} MB; the limit is "
                             f"{max_file_bytes / 2**20:,.0f} MB.", source=source.name,
                             limit_bytes=max_file_bytes)


def _load(importer, source: Source, target: ImportTarget) -> None:
    try:
        importer.load(source, target)
    except duckdb.Error as exc:  # an expected fault is already ImportFailed; name the rest
        if isinstance(exc, duckdb.InterruptException):
            raise
        logger.warning("import of %s failed in DuckDB: %s", source.display, duckdb_message(exc))
        raise ImportFailed(f"{source.display} could not be imported: {duckdb_message(exc)}",
                           source=source.display) from None


def _config(building: Path, threads: int | None, memory_limit: str | None) -> dict:
    config: dict = {"autoload_known_extensions": False, "autoinstall_known_extensions": False,
                    "temp_directory": str(building) + ".spill"}
    if threads:
        config["threads"] = threads
    if memory_limit:
        config["memory_limit"] = memory_limit
    return config


def _publish(building: Path, final: Path) -> None:
    """Rename the finished file into place, durably; refuses to replace a version."""
    with open(building, "rb") as handle:
        os.fsync(handle.fileno())
    if final.exists():
        raise Conflict(f"{final.name} appeared while it was being built; versions are immutable.")
    os.rename(building, final)
    directory = os.open(final.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
    _remove_build_files(building)  # an empty spill directory


def _remove_build_files(building: Path) -> None:
    for path in (building, Path(f"{building}.wal"), Path(f"{building}.spill"),
                 Path(f"{building}.scratch")):
        _remove_path(path)


def _remove_path(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def _abandoned(host: str, pid: int, path: Path) -> bool:
    if host == _host():
        if pid == os.getpid():
            return False
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False
    try:
        return time.time() - path.stat().st_mtime > STALE_AFTER_S
    except FileNotFoundError:
        return False


def _host() -> str:
    return re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname()) or "host"


def _listdir(folder: Path) -> list[Path]:
    try:
        return list(folder.iterdir())
    except FileNotFoundError:
        return []
