"""A dataset's import states and every change of them, each a guarded UPDATE.

Like ``shared/job_state.py`` for jobs: the row is the truth, the ``datasets`` queue
only a wake-up, and each change happens once, while its guard holds (the row count
says whether it did).

    transition  guard (the row must be ...)                     change
    ----------  ----------------------------------------------  -----------------------------
    (create)    --                                              importing, building 1, seq 1
    REFRESH     not deleted, not importing                      importing, building version+1,
                                                                seq + 1, attempts 0
    CLAIM       building :version, heartbeat unset or stale,    heartbeat now (one builder),
                attempts < :max_attempts                        attempts + 1
    GIVE_UP     building :version, heartbeat unset or stale,    as FAIL (its error says the
                attempts >= :max_attempts                       attempts ended without result)
    BEAT        building :version                               heartbeat now
    RELEASE     building :version                               heartbeat unset, attempts - 1
                                                                (its worker stopped it: it
                                                                is done again, not counted)
    REQUEUE     building :version, heartbeat stale,             heartbeat unset (its builder
                attempts < :max_attempts                        died: claimable, to be resent)
    RESENT      building :version, heartbeat unset              updated now (sent again)
    READY       building :version                               ready, version = :version
    FAIL        building :version                               failed, or still ready on the
                                                                version it had; error stored

A deleted dataset has no building version: BEAT then changes nothing, which is how a
running import learns that it is no longer wanted.

``seq`` numbers the imports of a dataset: their progress events go to the stream
``import_stream(id, seq)``, so that each import has its own terminal event.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from sqlalchemy import bindparam, case, select, update
from sqlalchemy.orm import Session
from sqlalchemy.sql import Update

from shared.errors import Conflict, NotFound
from shared.models import Dataset, is_id
from shared.people_access import may_use
from shared.principal import Principal

datasets = Dataset.__table__
col = datasets.c
NOW = bindparam("now", type_=col.heartbeat_at.type)
VERSION = bindparam("of_version")
_BUILDING = (col.id == bindparam("dataset_id")) & (col.building_version == VERSION)


@dataclasses.dataclass(frozen=True)
class Transition:
    name: str
    statement: Update

    def apply(self, db: Any, **params: Any) -> int:
        """Run it in the caller's transaction; how many rows changed (0: guard failed)."""
        return db.execute(self.statement, params).rowcount


REFRESH = Transition("refresh", update(datasets).where(
    col.id == bindparam("dataset_id"), col.deleted_at.is_(None),
    col.building_version.is_(None)).values(
    status="importing",
    building_version=case((col.version.is_(None), 1), else_=col.version + 1),
    import_seq=col.import_seq + 1, import_attempts=0, heartbeat_at=None, updated_at=NOW))
_STALE = bindparam("stale_before", type_=col.heartbeat_at.type)
_MAX_ATTEMPTS = bindparam("max_attempts")
_CLAIMABLE = _BUILDING & (col.heartbeat_at.is_(None) | (col.heartbeat_at < _STALE))
CLAIM = Transition("claim", update(datasets).where(
    _CLAIMABLE, col.deleted_at.is_(None), col.import_attempts < _MAX_ATTEMPTS).values(
    heartbeat_at=NOW, import_attempts=col.import_attempts + 1))
BEAT = Transition("beat", update(datasets).where(_BUILDING).values(heartbeat_at=NOW))
RELEASE = Transition("release", update(datasets).where(_BUILDING).values(
    heartbeat_at=None, import_attempts=case((col.import_attempts > 0,
                                             col.import_attempts - 1), else_=0),
    updated_at=NOW))
REQUEUE = Transition("requeue", update(datasets).where(
    _BUILDING, col.heartbeat_at < _STALE, col.import_attempts < _MAX_ATTEMPTS)
    .values(heartbeat_at=None, updated_at=NOW))
RESENT = Transition("resent", update(datasets).where(_BUILDING, col.heartbeat_at.is_(None))
                    .values(updated_at=NOW))
READY = Transition("ready", update(datasets).where(_BUILDING).values(
    status="ready", version=VERSION, building_version=None, error=None, heartbeat_at=None,
    updated_at=NOW))
_FAILED = {"status": case((col.version.is_(None), "failed"), else_="ready"),
           "building_version": None, "error": bindparam("error", type_=col.error.type),
           "heartbeat_at": None, "updated_at": NOW}
FAIL = Transition("fail", update(datasets).where(_BUILDING).values(**_FAILED))
GIVE_UP = Transition("give_up", update(datasets).where(
    _CLAIMABLE, col.import_attempts >= _MAX_ATTEMPTS).values(**_FAILED))


def abandoned_detail(attempts: int) -> str:
    """Why an import given up (GIVE_UP) failed, in the words its error carries."""
    return (f"The import was attempted {attempts} times; the last attempt ended without a "
            "result (the worker stopped). A file that stops the worker that reads it is "
            "not tried again; check the source, then refresh.")


def import_stream(dataset_id: str, seq: int) -> str:
    """The event stream id of a dataset's ``seq``-th import."""
    return f"{dataset_id}.{seq}"


# Built once: every submit runs one of them.
_PINNABLE = select(col.id, col.version, col.status, col.access).where(
    col.tenant_id == bindparam("tenant_id"), col.deleted_at.is_(None))
_PIN_NAMED = _PINNABLE.where(col.id == bindparam("dataset_id")).with_for_update(read=True)
_PIN_DEFAULT = _PINNABLE.where(col.is_default.is_(True)).limit(1).with_for_update(read=True)


def pin_dataset(s: Session, tenant_id: int, dataset_id: str | None,
                principal: Principal | None = None) -> tuple[str | None, int | None]:
    """The dataset and version a new job of ``tenant_id`` asks about: ``dataset_id``'s
    current version, else the tenant's default dataset's, else ``(None, None)``: the
    deployment's built-in dataset.

    Read under a shared lock of the dataset's row, held to the caller's commit, so that
    the version cannot be removed (``worker/datasets/versions.py``) before the job that
    pins it is committed. Raises NotFound for an unknown, deleted or another tenant's
    dataset, Conflict when it has no ready version yet. With ``principal``, a dataset
    whose ``access`` does not grant it is NotFound too (``shared.principal.may_use``).
    """
    if dataset_id is None:
        row = s.execute(_PIN_DEFAULT, {"tenant_id": tenant_id}).first()
    elif is_id(dataset_id):
        row = s.execute(_PIN_NAMED, {"tenant_id": tenant_id, "dataset_id": dataset_id}).first()
    else:
        raise NotFound(f"No dataset {dataset_id}.")
    if row is None:
        if dataset_id is not None:
            raise NotFound(f"No dataset {dataset_id}.")
        return None, None
    if principal is not None and not may_use(principal, row.access):
        raise NotFound(f"No dataset {dataset_id}." if dataset_id else
                       "The default dataset is not shared with you; ask an admin for "
                       "access or name a dataset_id.")
    if row.version is None:
        raise Conflict(f"Dataset {row.id} has no ready version yet (it is {row.status}); "
                       "ask once its import has finished.", dataset_id=row.id,
                       dataset_status=row.status)
    return row.id, row.version
