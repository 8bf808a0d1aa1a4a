"""Removing dataset versions no job needs any more, and datasets deleted through the API.

A version is kept while it is the dataset's current one or a queued or running job
pinned it (``jobs.dataset_version``, set when the job was submitted); past that its
file and row go. A deleted dataset (``deleted_at`` set) loses every version once no
active job pins one, then its uploaded sources and its row. Run after each import and
by the reaper's sweep; safe to run anywhere at any time (what it removes is unused).
Uploads an API process was killed while receiving (``uploads/.upload-*.part``) go
after a day.
"""
from __future__ import annotations

import logging
import shutil
import time
from pathlib import Path

from sqlalchemy import delete, select

from engine.datasets import delete_version
from shared.config import Settings
from shared.job_state import ACTIVE
from shared.models import Dataset, DatasetVersion, Job

logger = logging.getLogger(__name__)

ABANDONED_UPLOAD_S = 24 * 3600


def retire_versions(settings: Settings, sessions, dataset_id: str | None = None) -> int:
    """Remove the unused versions of ``dataset_id`` (default: of every dataset) and the
    deleted datasets left with none; returns how many versions were removed."""
    removed = 0
    with sessions() as s:
        query = select(DatasetVersion.dataset_id, DatasetVersion.version, Dataset.version,
                       Dataset.deleted_at.is_not(None)).join(Dataset)
        if dataset_id is not None:
            query = query.where(DatasetVersion.dataset_id == dataset_id)
        candidates = [(ds, v) for ds, v, current, deleted in s.execute(query).all()
                      if deleted or v != current]
    for ds, version in candidates:
        with sessions.begin() as s:
            # The API pins a version under a shared lock of the dataset's row: holding
            # it exclusively here, no job can pin this version between check and delete.
            s.execute(select(Dataset.id).where(Dataset.id == ds).with_for_update())
            if s.scalar(select(Job.id).where(Job.dataset_id == ds, Job.dataset_version == version,
                                             Job.status.in_(ACTIVE)).limit(1)):
                continue
            s.execute(delete(DatasetVersion).where(DatasetVersion.dataset_id == ds,
                                                   DatasetVersion.version == version))
        delete_version(settings.data_dir, ds, version)
        logger.info("dataset %s: version %s removed (no job uses it)", ds, version)
        removed += 1
    _forget_deleted(settings, sessions, dataset_id)
    return removed


def _forget_deleted(settings: Settings, sessions, dataset_id: str | None) -> None:
    with sessions.begin() as s:
        query = select(Dataset.id).where(Dataset.deleted_at.is_not(None),
                                         ~Dataset.id.in_(select(DatasetVersion.dataset_id)))
        if dataset_id is not None:
            query = query.where(Dataset.id == dataset_id)
        gone = s.scalars(query).all()
        if gone:
            s.execute(delete(Dataset).where(Dataset.id.in_(gone)))
    for ds in gone:
        shutil.rmtree(Path(settings.data_dir) / ds, ignore_errors=True)
        logger.info("dataset %s: deleted, its files removed", ds)


def remove_abandoned_uploads(data_dir: str) -> int:
    """Remove upload parts older than a day (their request died); returns how many."""
    removed = 0
    for path in (Path(data_dir) / "uploads").glob(".upload-*.part"):
        try:
            if time.time() - path.stat().st_mtime > ABANDONED_UPLOAD_S:
                path.unlink()
                removed += 1
        except FileNotFoundError:
            continue
    return removed
