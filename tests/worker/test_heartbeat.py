"""The per-process heartbeat refreshes only jobs still running under their attempt."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import update

from shared.db import session_factory, session_scope
from shared.models import Job
from tests.utils.jobs import create_job
from worker.jobs.heartbeat import Heartbeats

OLD = dt.datetime(2020, 1, 1)


def _set(settings, job_id, **values):
    with session_scope(settings.database_url) as s:
        s.execute(update(Job).where(Job.id == job_id).values(**values))


def _beat_at(settings, job_id):
    with session_scope(settings.database_url) as s:
        return s.get(Job, job_id).heartbeat_at


def test_one_batched_update_beats_for_every_tracked_job(settings):
    mine = [create_job(settings, "q")[0] for _ in range(3)]
    lost, other_attempt = create_job(settings, "q")[0], create_job(settings, "q")[0]
    for job_id in [*mine, lost, other_attempt]:
        _set(settings, job_id, status="running", attempt=1, heartbeat_at=OLD)
    _set(settings, lost, status="failed")
    _set(settings, other_attempt, attempt=2)
    beats = Heartbeats(session_factory(settings.database_url), interval_s=60)
    for job_id in [*mine, lost, other_attempt]:
        beats.add(job_id, 1)
    try:
        assert beats.beat_once() == 3
        assert all(_beat_at(settings, j) > OLD for j in mine)
        assert _beat_at(settings, lost) == OLD and _beat_at(settings, other_attempt) == OLD
        beats.remove(mine[0])
        _set(settings, mine[0], heartbeat_at=OLD)
        assert beats.beat_once() == 2 and _beat_at(settings, mine[0]) == OLD
    finally:
        beats.stop()
