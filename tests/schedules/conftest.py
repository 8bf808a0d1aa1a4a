"""Fixtures for schedule delivery: a database and a redis-server of these tests' own (a
real worker subprocess and beat consume them), a real SMTP server and a real HTTP
receiver on 127.0.0.1, and settings pointing at them with fast retries."""
from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from bench.scratch_mariadb import create_database, drop_database
from shared.config import Settings
from tests.utils.delivery_receivers import Mailbox, Receiver, http_receiver, smtp_server
from tests.utils.sunrise_processes import Launcher, RedisServer

SCHEDULES_DB = f"sunrise_sched_{os.getpid()}"


@pytest.fixture(scope="module")
def schedules_database_url(database_url) -> Iterator[str]:
    yield create_database(SCHEDULES_DB)
    drop_database(SCHEDULES_DB)


@pytest.fixture(scope="module")
def mailbox() -> Iterator[Mailbox]:
    with smtp_server() as box:
        yield box


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    with http_receiver() as r:
        yield r


@pytest.fixture(scope="module")
def schedule_redis(tmp_path_factory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("sched-redis")).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def delivery_settings(base_settings, schedules_database_url, schedule_redis, mailbox) -> Settings:
    return base_settings.model_copy(update={
        "database_url": schedules_database_url, "redis_url": schedule_redis.url,
        "smtp_url": f"smtp://127.0.0.1:{mailbox.port}?from=reports@sunrise.test",
        "public_url": "https://sunrise.example.com", "webhook_backoff_s": 0.05,
        "webhook_max_attempts": 3, "webhook_timeout_s": 5.0, "schedules_tick_s": 1.0,
        "reaper_interval_s": 5.0})


@pytest.fixture(scope="module")
def launcher(tmp_path_factory, delivery_settings) -> Iterator[Launcher]:
    """One real worker subprocess for the module; beat is started by the tests that
    need it. Logs printed at teardown."""
    processes = Launcher(tmp_path_factory.mktemp("sched-procs"), delivery_settings)
    processes.worker("w1", concurrency=4)
    yield processes
    processes.stop_all()
    print(processes.logs())
