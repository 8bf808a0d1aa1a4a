"""Deployment-wide figures read from Redis and the database each time /metrics is scraped.

These belong to no single process, so the API reads them on demand instead of a
worker counting them: the Celery queue depth (including kombu's priority sub-queues)
and unacknowledged deliveries, queued/running jobs and the age of the oldest queued
one, and open SSE streams. A source that does not answer is reported through
``sunrise_metrics_source_up`` and the scrape still succeeds.
"""
from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator

import redis
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from sqlalchemy import func, select
from sqlalchemy.exc import SQLAlchemyError

from api.sse_subscribers import count_subscribers
from shared.budgets import spend_by_tenant
from shared.celery_factory import QUEUES
from shared.job_state import ACTIVE
from shared.metrics import tenant_spend_families
from shared.models import Dataset, Job, utcnow

logger = logging.getLogger(__name__)

# kombu's Redis transport keeps priority p != 0 of queue q in the list "q\x06\x16p".
KOMBU_PRIORITY_SEP = "\x06\x16"
KOMBU_PRIORITY_STEPS = (3, 6, 9)
KOMBU_UNACKED_KEY = "unacked"


def queue_keys(queue: str) -> list[str]:
    """Every Redis list that holds messages of ``queue``."""
    return [queue, *(f"{queue}{KOMBU_PRIORITY_SEP}{p}" for p in KOMBU_PRIORITY_STEPS)]


class FleetCollector(Collector):
    """A prometheus-client collector over a ``Resources``-like object (``redis``, ``sessions``)."""

    def __init__(self, services, queues: Iterable[str] = QUEUES):
        self.services = services
        self.queues = tuple(queues)

    def collect(self) -> Iterator[GaugeMetricFamily]:
        up = GaugeMetricFamily("sunrise_metrics_source_up",
                               "1 when the source answered this scrape.", labels=["source"])
        try:
            yield from self._redis_families()
            up.add_metric(["redis"], 1)
        except redis.RedisError as exc:
            logger.warning("metrics: Redis figures unavailable: %s", exc)
            up.add_metric(["redis"], 0)
        try:
            yield from self._database_families()
            up.add_metric(["database"], 1)
        except SQLAlchemyError as exc:
            logger.warning("metrics: database figures unavailable: %s", exc)
            up.add_metric(["database"], 0)
        yield up

    def _redis_families(self) -> list[GaugeMetricFamily]:
        client = self.services.redis
        pipe = client.pipeline(transaction=False)
        for queue in self.queues:
            for key in queue_keys(queue):
                pipe.llen(key)
        pipe.hlen(KOMBU_UNACKED_KEY)
        lengths = pipe.execute()
        depth = GaugeMetricFamily("sunrise_queue_depth",
                                  "Messages waiting in a Celery queue.", labels=["queue"])
        per_queue = len(KOMBU_PRIORITY_STEPS) + 1
        for i, queue in enumerate(self.queues):
            depth.add_metric([queue], sum(lengths[i * per_queue:(i + 1) * per_queue]))
        unacked = GaugeMetricFamily(
            "sunrise_queue_unacked",
            "Messages delivered to workers and not yet acknowledged (jobs in flight).",
            value=lengths[-1])
        sse = GaugeMetricFamily("sunrise_sse_subscribers",
                                "Open Server-Sent Events streams across all API processes.",
                                value=count_subscribers(client))
        return [depth, unacked, sse]

    def _database_families(self) -> list[GaugeMetricFamily]:
        with self.services.sessions() as s:
            counts = dict(s.execute(
                select(Job.status, func.count()).where(Job.status.in_(ACTIVE))
                .group_by(Job.status)).all())
            oldest = s.scalar(select(func.min(Job.created_at)).where(Job.status == "queued"))
            # dataset_state stamps updated_at when an import is requested or claimed,
            # so the oldest importing row's updated_at ages with a stuck import.
            importing = s.execute(
                select(func.count(), func.min(Dataset.updated_at))
                .where(Dataset.status == "importing", Dataset.deleted_at.is_(None))).one()
            spend = spend_by_tenant(s)
        jobs = GaugeMetricFamily("sunrise_jobs", "Jobs queued or running right now.",
                                 labels=["status"])
        for status in ACTIVE:
            jobs.add_metric([status], counts.get(status, 0))
        age = (utcnow() - oldest).total_seconds() if oldest is not None else 0.0
        oldest_age = GaugeMetricFamily(
            "sunrise_oldest_queued_job_age_seconds",
            "Age of the oldest job still queued (0 when none): work waiting for workers.",
            value=max(0.0, age))
        datasets = GaugeMetricFamily("sunrise_datasets", "Datasets importing right now.",
                                     labels=["status"])
        datasets.add_metric(["importing"], importing[0])
        import_age = (utcnow() - importing[1]).total_seconds() if importing[1] else 0.0
        oldest_import = GaugeMetricFamily(
            "sunrise_oldest_import_age_seconds",
            "Time since the oldest import still running was requested (0 when none).",
            value=max(0.0, import_age))
        return [jobs, oldest_age, datasets, oldest_import, *tenant_spend_families(spend)]
