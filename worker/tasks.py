"""The Celery tasks: module-level, thin entry points that hand an id to a plain runner.

Each task finds its runners through the app it runs on (``runners_for(task.app)``),
built once per app and process from the settings the app was made with
(``shared/celery_factory.py``), so ``sunrise worker``, ``celery -A worker.celery_app``
and the test suite's in-process worker run the same tasks. A job's task id is the job
id and an economy batch's the batch id (``shared/enqueue.py``,
``api/services/batches.py``), so ``celery inspect`` and Flower show them.
"""
from __future__ import annotations

import dataclasses
import threading
import weakref

from celery import Celery, shared_task
from celery.exceptions import Reject

from shared.celery_factory import (
    ASSEMBLE_BATCH,
    DELIVER_SCHEDULE_RUN,
    IMPORT_DATASET,
    REAP,
    REFRESH_DUE,
    RUN_ECONOMY_BATCH,
    RUN_JOB,
    RUN_SCHEDULE,
    SCHEDULES_DUE,
    settings_of,
)
from shared.config import Settings
from shared.events import EventLog
from shared.redis_client import redis_for

_GUARANTEED = {"acks_late": True, "reject_on_worker_lost": True}


@shared_task(name=RUN_JOB, bind=True, **_GUARANTEED)
def run_job(task, job_id: str) -> None:
    runners_for(task.app).jobs.run(job_id)


@shared_task(name=ASSEMBLE_BATCH, bind=True, **_GUARANTEED)
def assemble_batch(task, batch_id: str) -> None:
    runners_for(task.app).batches.assemble(batch_id)


@shared_task(name=RUN_ECONOMY_BATCH, bind=True, **_GUARANTEED)
def run_economy_batch(task, batch_id: str) -> None:
    from worker.batches.message_batches import EconomyBatch

    EconomyBatch(runners_for(task.app).jobs).run(batch_id)


# max_retries=None here (not only in retry()): Celery's retry(max_retries=None) falls back
# to the task's limit (3), so a worker kept busy past 3 waits dropped the import.
@shared_task(name=IMPORT_DATASET, bind=True, max_retries=None, **_GUARANTEED)
def import_dataset(task, dataset_id: str, version: int) -> None:
    from shared.metrics import get_metrics
    from worker.datasets.import_process import WorkerStopping
    from worker.datasets.import_run import ImportSlotsBusy

    runners = runners_for(task.app)
    try:
        get_metrics().dataset_import_finished(runners.datasets.run(dataset_id, version))
    except ImportSlotsBusy:
        # Sent again later, this message acknowledged; no attempt was counted.
        raise task.retry(countdown=runners.settings.import_busy_retry_s,
                         max_retries=None) from None
    except WorkerStopping:
        raise Reject("the worker is stopping", requeue=True) from None


@shared_task(name=REFRESH_DUE, bind=True)
def refresh_due(task) -> None:
    from worker.datasets.refresh_tick import start_due_refreshes

    start_due_refreshes(runners_for(task.app).datasets.sessions, task.app)


@shared_task(name=SCHEDULES_DUE, bind=True)
def schedules_due(task) -> None:
    from worker.schedules.tick import start_due_runs

    start_due_runs(runners_for(task.app).schedules.sessions, task.app)


@shared_task(name=RUN_SCHEDULE, bind=True, **_GUARANTEED)
def run_schedule(task, run_id: str) -> None:
    runners_for(task.app).schedules.run(run_id)


@shared_task(name=DELIVER_SCHEDULE_RUN, bind=True, **_GUARANTEED)
def deliver_schedule_run(task, run_id: str) -> None:
    runners_for(task.app).schedules.deliver(run_id)


@shared_task(name=REAP, bind=True)
def reap(task) -> None:
    from shared.metrics import get_metrics

    get_metrics().reaper_swept(runners_for(task.app).reaper().run_once())


@dataclasses.dataclass
class Runners:
    """One worker process's runners for one Celery app."""

    settings: Settings
    app: Celery

    def __post_init__(self) -> None:
        from shared.metrics import get_metrics
        from worker.batches.coordinator import BatchCoordinator
        from worker.datasets.import_run import DatasetImporter
        from worker.jobs.runner import JobRunner
        from worker.schedules.runner import ScheduleRunner

        events = EventLog(redis_for(self.settings.redis_url), maxlen=self.settings.events_maxlen,
                          ttl_s=self.settings.events_ttl_s)
        self.schedules = ScheduleRunner(self.settings, self.app, events)
        self.batches = BatchCoordinator(self.settings, self.app, EventLog(
            events.client, maxlen=events.maxlen, ttl_s=events.ttl_s, kind="batch"),
            after_assembly=[self.schedules.on_batch_assembled])
        self.jobs = JobRunner(self.settings, events=events, metrics=get_metrics(),
                              after_finish=[self.batches.on_job_finished])
        self.datasets = DatasetImporter(self.settings, EventLog(
            events.client, maxlen=events.maxlen, ttl_s=events.ttl_s, kind="dataset"))

    def reaper(self):
        from worker.jobs.reaper import Reaper

        return Reaper(self.settings, self.app, after_finish=[self.batches.on_job_finished])


# Built on first use, per app (the test suite makes several); a bare registry is no
# resource, the runners in it are.
_runners: weakref.WeakKeyDictionary[Celery, Runners] = weakref.WeakKeyDictionary()
_runners_lock = threading.Lock()


def runners_for(app: Celery) -> Runners:
    """The runners of ``app`` in this process, built on its first task (thread-safe: a
    worker's first tasks arrive on several threads at once)."""
    with _runners_lock:
        runners = _runners.get(app)
        if runners is None:
            runners = _runners[app] = Runners(settings_of(app), app)
        return runners
