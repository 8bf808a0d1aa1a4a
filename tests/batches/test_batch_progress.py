"""A batch's events keep the endpoint's promise -- one progress per question, then
completed -- when jobs end together: they count and publish in turn (under the batch
row's lock), so progress never goes back, and the assembly reports any question whose
job has not reported yet before its completed, after which a late report stays away."""
from __future__ import annotations

import threading

from sqlalchemy import select, update

from shared import batch_rows
from shared.db import session_scope
from shared.events import EventLog
from shared.keys import tenant_for_key
from shared.models import Job, utcnow
from shared.redis_client import redis_for
from worker.batches.coordinator import BatchCoordinator

HOLD_S = 1.5


class FirstPublishWaits:
    """An event log whose first publish waits (up to ``HOLD_S``) for another publish to
    go out first: the interleaving in which, counted without a lock, the later count
    reached the stream before the earlier one."""

    def __init__(self, log: EventLog):
        self.log, self.client = log, log.client
        self._first = True
        self._lock = threading.Lock()
        self.first_publishing = threading.Event()
        self.other_went = threading.Event()

    def publish(self, object_id: str, event: str, data: dict):
        with self._lock:
            first, self._first = self._first, False
        if first:
            self.first_publishing.set()
            self.other_went.wait(HOLD_S)
        entry = self.log.publish(object_id, event, data)
        if not first:
            self.other_went.set()
        return entry


def _batch(settings, tenant_key: str, questions: list[str]) -> str:
    with session_scope(settings.database_url) as s:
        tenant = tenant_for_key(s, tenant_key)
        return batch_rows.create_batch(s, tenant_id=tenant.id, questions=questions,
                                       model=settings.model).id


def _end(settings, batch_id: str, index: int) -> Job:
    with session_scope(settings.database_url) as s:
        s.execute(update(Job).where(Job.batch_id == batch_id, Job.batch_index == index)
                  .values(status="succeeded", finished_at=utcnow()))
    with session_scope(settings.database_url) as s:
        job = s.scalar(select(Job).where(Job.batch_id == batch_id, Job.batch_index == index))
        s.expunge(job)
        return job


def test_progress_of_jobs_ending_together_never_goes_back(settings, tenant_key):
    batch_id = _batch(settings, tenant_key, ["a?", "b?"])
    log = EventLog(redis_for(settings.redis_url), kind="batch")
    waits = FirstPublishWaits(log)
    coordinator = BatchCoordinator(settings, None, waits, run_jobs=lambda job_ids: None)
    first = threading.Thread(target=coordinator.on_job_finished,
                             args=(_end(settings, batch_id, 0),))
    first.start()
    # The first job has counted "1 of 2" and is publishing it when the second ends.
    assert waits.first_publishing.wait(15)
    second = threading.Thread(target=coordinator.on_job_finished,
                              args=(_end(settings, batch_id, 1),))
    second.start()
    first.join(15)
    second.join(15)
    done = [event.data["done"] for event in log.read(batch_id) if event.event == "progress"]
    assert done == [1, 2]



def test_every_question_is_reported_before_completed_even_when_its_job_reports_late(
        settings, tenant_key):
    batch_id = _batch(settings, tenant_key, ["a?", "b?"])
    log = EventLog(redis_for(settings.redis_url), kind="batch")
    coordinator = BatchCoordinator(settings, None, log, run_jobs=lambda job_ids: None)
    first, late = _end(settings, batch_id, 0), _end(settings, batch_id, 1)
    # The first job to report sees both ended and has the report assembled (here, at
    # once) before the other job's own report runs.
    coordinator.on_job_finished(first)
    coordinator.on_job_finished(late)
    events = log.read(batch_id)
    assert [e.event for e in events] == ["progress", "progress", "completed"]
    assert [e.data["index"] for e in events if e.event == "progress"] == [0, 1]
    assert events[-1].data["status"] == "completed"
