"""A tenant's dataset quota: how many datasets it has and how many bytes they store, against
``tenant_max_datasets`` and ``tenant_max_bytes`` (0: unlimited).

Stored bytes are measured, not recorded: the sizes of the files under each of the
tenant's datasets' folders (``<data_dir>/<dataset_id>/``: its kept sources and every
version). Deleted datasets count for nothing, even before their files are collected.

The check is made before anything is kept, not under a lock: two uploads racing may both
pass and end a little over the limit. That is the price of not serialising every
tenant's uploads; the next request is refused.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from shared.config import Settings
from shared.errors import DatasetQuotaExceeded, StorageQuotaExceeded
from shared.models import Dataset


@dataclass(frozen=True)
class Usage:
    datasets: int
    bytes: int
    max_datasets: int
    max_bytes: int

    def as_dict(self) -> dict[str, int]:
        """The JSON of ``GET /v1/datasets``' ``usage``."""
        return {"datasets": self.datasets, "bytes": self.bytes,
                "max_datasets": self.max_datasets, "max_bytes": self.max_bytes}


def tenant_usage(session: Session, settings: Settings, tenant_id: int) -> Usage:
    """``tenant_id``'s datasets (not deleted) and the bytes stored for them now."""
    ids = session.scalars(select(Dataset.id).where(Dataset.tenant_id == tenant_id,
                                                   Dataset.deleted_at.is_(None))).all()
    root = Path(settings.data_dir)
    return Usage(len(ids), sum(_folder_bytes(root / i) for i in ids),
                 settings.tenant_max_datasets, settings.tenant_max_bytes)


def check_room(session: Session, settings: Settings, tenant_id: int, *, new_datasets: int,
               new_bytes: int) -> None:
    """Raise unless ``tenant_id`` may add ``new_datasets`` datasets and ``new_bytes`` bytes.

    DatasetQuotaExceeded (429) when its datasets would pass the count limit;
    StorageQuotaExceeded (413) when its stored bytes plus ``new_bytes`` would pass the byte
    limit. Both details give the usage and the limit. An import of unknown size (a
    snapshot, a refresh) passes ``new_bytes=1``: it needs some room left.
    """
    usage = tenant_usage(session, settings, tenant_id)
    facts = {"usage": usage.as_dict()}
    if new_datasets and usage.max_datasets and usage.datasets + new_datasets > usage.max_datasets:
        raise DatasetQuotaExceeded(
            f"You have {usage.datasets} datasets; your limit is {usage.max_datasets}. "
            "Delete one to make room.", **facts)
    if usage.max_bytes and usage.bytes + new_bytes > usage.max_bytes:
        raise StorageQuotaExceeded(
            f"Your datasets store {usage.bytes} bytes; this needs {new_bytes} more and your "
            f"limit is {usage.max_bytes} bytes. Delete a dataset to make room.", **facts)


def _folder_bytes(folder: Path) -> int:
    """Bytes of the regular files under ``folder`` (0 when it does not exist); links are
    not followed, so nothing outside is counted."""
    total, pending = 0, [folder]
    while pending:
        try:
            entries = list(os.scandir(pending.pop()))
        except (FileNotFoundError, NotADirectoryError):
            continue  # collected, or not made yet, meanwhile
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    pending.append(Path(entry.path))
                elif entry.is_file(follow_symlinks=False):
                    total += entry.stat(follow_symlinks=False).st_size
            except FileNotFoundError:
                continue
    return total
