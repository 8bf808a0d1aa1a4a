"""Scheduled refreshes: the beat's tick starts each due dataset's refresh once per slot.

A dataset with a schedule (``shared/refresh_schedule.py``) has ``next_refresh_at``, its
next slot in UTC. Every tick (``sunrise.refresh_due``, on the beat) reads the datasets
whose slot has come through ``ix_datasets_next_refresh``, and for each, in one
transaction: records the slot in ``dataset_refresh_slots`` (its primary key is the
dataset and the slot: a second tick, a second beat or a retried task that sees the same
slot fails that insert and starts nothing), moves ``next_refresh_at`` to the slot after
now (slots missed while no beat ran are not made up: one refresh catches up), and
applies ``REFRESH`` (``shared/dataset_state.py``). The import is sent after the commit;
unsent, the reaper sends it (the row says what is being built).

A slot that finds the dataset importing already is recorded with no version and
skipped. A refresh that fails keeps the current version serving and records its error
on the dataset, as any import's does (``worker/datasets/import_run.py``). The tenant's
storage quota is the API's to enforce on requests; a scheduled refresh of a dataset
already kept is not refused by it.
"""
from __future__ import annotations

import datetime as dt
import logging

from sqlalchemy import bindparam, insert, select, update
from sqlalchemy.exc import IntegrityError

from shared import dataset_state
from shared.enqueue import send_import
from shared.models import Dataset, DatasetRefreshSlot, utcnow
from shared.refresh_schedule import RefreshSchedule

logger = logging.getLogger(__name__)

# Due datasets started per tick; the rest wait for the next tick (a minute at most).
PER_TICK = 100

_col = Dataset.__table__.c
_DUE = (select(_col.id, _col.next_refresh_at, _col.refresh_cron, _col.refresh_timezone)
        .where(_col.next_refresh_at <= bindparam("now"), _col.deleted_at.is_(None))
        .order_by(_col.next_refresh_at).limit(PER_TICK))
_ADVANCE = (update(Dataset.__table__)
            .where(_col.id == bindparam("dataset_id"), _col.next_refresh_at == bindparam("slot"))
            .values(next_refresh_at=bindparam("next_at")))
_CLAIM_SLOT = insert(DatasetRefreshSlot.__table__)
_slots = DatasetRefreshSlot.__table__.c


def start_due_refreshes(sessions, celery, now: dt.datetime | None = None) -> list[tuple[str, int]]:
    """Start the refresh of every dataset whose slot is at or before ``now`` (naive UTC;
    default: now) and not yet claimed; returns ``(dataset_id, version)`` of each refresh
    started. Safe to run concurrently and repeatedly: a slot starts one refresh."""
    now = now or utcnow()
    with sessions() as s:
        due = s.execute(_DUE, {"now": now}).all()
    started = []
    for dataset_id, slot, cron, timezone in due:
        version = _claim(sessions, dataset_id, slot, RefreshSchedule(cron, timezone), now)
        if version is not None:
            send_import(celery, dataset_id, version)
            started.append((dataset_id, version))
    return started


def _claim(sessions, dataset_id: str, slot: dt.datetime, schedule: RefreshSchedule,
           now: dt.datetime) -> int | None:
    """Claim ``slot`` and start its refresh, in one transaction; the version being built,
    or None when the slot was another's or the dataset was importing already."""
    try:
        with sessions.begin() as s:
            s.execute(_CLAIM_SLOT, {"dataset_id": dataset_id, "slot_at": slot,
                                    "version": None, "created_at": now})
            if not s.execute(_ADVANCE, {"dataset_id": dataset_id, "slot": slot,
                                        "next_at": schedule.next_after(now)}).rowcount:
                raise _SlotGone()
            if not dataset_state.REFRESH.apply(s, dataset_id=dataset_id, now=now):
                logger.info("dataset %s: refresh slot %s skipped (an import is running)",
                            dataset_id, slot)
                return None
            version = s.scalar(select(_col.building_version).where(_col.id == dataset_id))
            s.execute(update(DatasetRefreshSlot.__table__)
                      .where(_slots.dataset_id == dataset_id, _slots.slot_at == slot)
                      .values(version=version))
    except (IntegrityError, _SlotGone):
        # Claimed by another tick; a schedule still on that slot (set back by hand, or
        # the claimer's advance lost to a race) moves on, or every tick would stop here.
        with sessions.begin() as s:
            s.execute(_ADVANCE, {"dataset_id": dataset_id, "slot": slot,
                                 "next_at": schedule.next_after(now)})
        logger.info("dataset %s: refresh slot %s already claimed", dataset_id, slot)
        return None
    logger.info("dataset %s: scheduled refresh (slot %s) builds version %s", dataset_id,
                slot, version)
    return version


class _SlotGone(Exception):
    """The dataset's schedule moved on (changed, or another tick advanced it)."""
