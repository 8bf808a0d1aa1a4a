"""Celery tasks: thin entry points that hand ids to plain runners."""
from __future__ import annotations

import functools
import logging
from collections.abc import Callable

from celery import Celery

from shared.config import Settings
from shared.events import EventLog
from shared.queue import ASSEMBLE_BATCH, REAP, RUN_ECONOMY_BATCH, RUN_JOB
from shared.redis_client import redis_for

logger = logging.getLogger(__name__)


def register_tasks(app: Celery, get_settings: Callable[[], Settings]) -> None:
    """Bind the tasks to ``app``; runners are built once per process on first use."""

    @functools.cache
    def batches():
        from worker.batches import BatchCoordinator

        settings = get_settings()
        return BatchCoordinator(settings, app, EventLog(
            redis_for(settings.redis_url), maxlen=settings.events_maxlen,
            ttl_s=settings.events_ttl_s, kind="batch"))

    @functools.cache
    def runner():
        from shared.metrics import get_metrics
        from worker.runner import JobRunner

        settings = get_settings()
        events = EventLog(redis_for(settings.redis_url), maxlen=settings.events_maxlen,
                          ttl_s=settings.events_ttl_s)
        return JobRunner(settings, events=events, metrics=get_metrics(),
                         after_finish=[batches().on_job_finished])

    @app.task(name=RUN_JOB, acks_late=True, reject_on_worker_lost=True)
    def run_job(job_id: str) -> None:
        runner().run(job_id)

    @app.task(name=ASSEMBLE_BATCH, acks_late=True, reject_on_worker_lost=True)
    def assemble_batch(batch_id: str) -> None:
        batches().assemble(batch_id)

    @app.task(name=RUN_ECONOMY_BATCH, acks_late=True, reject_on_worker_lost=True)
    def run_economy_batch(batch_id: str) -> None:
        from worker.economy import EconomyBatch

        EconomyBatch(runner()).run(batch_id)

    @app.task(name=REAP)
    def reap() -> None:
        from worker.reaper import Reaper

        Reaper(get_settings(), app, after_finish=[batches().on_job_finished]).run_once()
