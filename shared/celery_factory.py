"""The Celery application factory, shared by the API (to enqueue) and the worker.

Crash safety: tasks are acknowledged late and handed back if the worker dies; the
Redis visibility timeout outlives the job deadline, so a slow job is never
redelivered while it still runs. The job row stays the source of truth: the queue
is only a wake-up, and the reaper re-enqueues whatever a lost message left behind.
"""
from __future__ import annotations

import datetime as dt
import ssl
from urllib.parse import urlsplit

from celery import Celery
from kombu import Queue

from shared.config import Settings

RUN_JOB = "sunrise.run_job"
REAP = "sunrise.reap"
ASSEMBLE_BATCH = "sunrise.assemble_batch"
RUN_ECONOMY_BATCH = "sunrise.run_economy_batch"
IMPORT_DATASET = "sunrise.import_dataset"
REFRESH_DUE = "sunrise.refresh_due"
SCHEDULES_DUE = "sunrise.schedules_due"
RUN_SCHEDULE = "sunrise.run_schedule"
DELIVER_SCHEDULE_RUN = "sunrise.deliver_schedule_run"
# How often the beat looks for datasets whose scheduled refresh is due.
REFRESH_TICK_S = 30.0
CHAT_QUEUE = "chat"
REPORTS_QUEUE = "reports"
DATASETS_QUEUE = "datasets"
# Every queue the app routes to: the metrics count each of them.
QUEUES = (CHAT_QUEUE, REPORTS_QUEUE, DATASETS_QUEUE)


def make_celery(settings: Settings) -> Celery:
    """The Celery app for ``settings``: queues, routes, late acks, the reaper's schedule.
    The worker's tasks (``worker/tasks.py``) read the settings back with ``settings_of``."""
    app = Celery("sunrise", broker=settings.redis_url, set_as_current=False)
    # Kept beside app.conf, not in it: `celery report` prints the conf, and the settings
    # hold secrets.
    app.sunrise_settings = settings
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_ignore_result=True,
        task_default_queue=CHAT_QUEUE,
        task_queues=tuple(Queue(q) for q in QUEUES),
        task_routes={RUN_JOB: {"queue": CHAT_QUEUE}, ASSEMBLE_BATCH: {"queue": REPORTS_QUEUE},
                     RUN_ECONOMY_BATCH: {"queue": REPORTS_QUEUE},
                     IMPORT_DATASET: {"queue": DATASETS_QUEUE},
                     REFRESH_DUE: {"queue": DATASETS_QUEUE},
                     SCHEDULES_DUE: {"queue": REPORTS_QUEUE},
                     RUN_SCHEDULE: {"queue": REPORTS_QUEUE},
                     DELIVER_SCHEDULE_RUN: {"queue": REPORTS_QUEUE},
                     REAP: {"queue": CHAT_QUEUE}},
        task_serializer="json",
        accept_content=["json"],
        worker_pool="threads",
        worker_concurrency=settings.worker_concurrency,
        worker_prefetch_multiplier=1,
        worker_send_task_events=settings.task_events,
        task_send_sent_event=settings.task_events,
        worker_hijack_root_logger=False,
        broker_connection_retry_on_startup=True,
        broker_connection_timeout=3,
        **_broker_connection(settings.redis_url),
        broker_transport_options={
            # Longer than any task may run (a job, or an import up to its deadline), so
            # Redis does not deliver a running task's message a second time.
            "visibility_timeout": int(max(settings.job_deadline_s * 2,
                                          settings.import_deadline_s) + 120),
            "socket_connect_timeout": 3,
            # A hung (not refused) Redis must not hang an API request forever either.
            "socket_timeout": 5,
        },
        # Publishing must fail fast when Redis is down: the job row is already
        # committed and the reaper enqueues it later.
        task_publish_retry=True,
        task_publish_retry_policy={"max_retries": 1, "interval_start": 0.1,
                                   "interval_step": 0.2, "interval_max": 0.3},
        beat_schedule={
            "reap-jobs": {"task": REAP,
                          "schedule": dt.timedelta(seconds=settings.reaper_interval_s),
                          # Sweeps that no worker ran in time are dropped, not piled up.
                          "options": {"expires": max(1.0, settings.reaper_interval_s)}},
            # Each due slot starts once (worker/datasets/refresh_tick.py): a tick that
            # runs twice or late starts nothing twice.
            "refresh-datasets": {"task": REFRESH_DUE,
                                 "schedule": dt.timedelta(seconds=REFRESH_TICK_S),
                                 "options": {"expires": REFRESH_TICK_S}},
            # Each due schedule slot runs once (worker/schedules/tick.py), however many
            # ticks or beats see it.
            "schedules": {"task": SCHEDULES_DUE,
                          "schedule": dt.timedelta(seconds=settings.schedules_tick_s),
                          "options": {"expires": settings.schedules_tick_s}},
        },
    )
    return app


def _broker_connection(url: str) -> dict:
    """Celery settings for connecting to the broker at ``url``: kombu's Redis transport,
    fixed to survive a broker loss with tasks in flight (``shared/broker_transport.py``),
    over TLS for a rediss:// URL.

    Naming the transport makes kombu forget the URL's scheme, and with it TLS: without
    ``ssl_*`` query parameters in the URL, ``broker_use_ssl`` is what keeps it. With
    none, kombu itself would connect over TLS without checking the certificate (it logs
    a warning); here the certificate is checked, as redis-py checks it for our own
    clients. The URL's ``ssl_*`` parameters replace this dict (``ssl_ca_certs``,
    ``ssl_cert_reqs=none`` ...). Other schemes are left to kombu."""
    scheme = urlsplit(url).scheme
    transport = {"broker_transport": "shared.broker_transport:Transport"}
    if scheme == "redis":
        return transport
    if scheme == "rediss":
        return {**transport, "broker_use_ssl": {"ssl_cert_reqs": ssl.CERT_REQUIRED}}
    return {}


def settings_of(app: Celery) -> Settings:
    """The settings ``app`` was made with (``make_celery``)."""
    return app.sunrise_settings
