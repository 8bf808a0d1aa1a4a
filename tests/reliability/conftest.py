"""Fixtures for the reliability tests: their own MariaDB database, a private
redis-server per test, and real worker / beat subprocesses.

Isolation matters here: the reaper sweeps every job of its database and the workers
consume every message of their Redis, so these tests never share either with the rest
of the session (whose in-process worker would otherwise take their jobs). The shared
Redis and MariaDB of the machine are never stopped: Redis outages use the private
server, MariaDB outages a TCP proxy in front of it.
"""
from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from bench.scratch_mariadb import MARIADB, create_database, drop_database
from shared.config import Settings
from tests.utils.sunrise_processes import Launcher, RedisServer
from tests.utils.tcp_proxy import TcpProxy

FAULT_DB = f"sunrise_fault_{os.getpid()}"


@pytest.fixture(scope="session")
def fault_database_url(database_url) -> Iterator[str]:
    """A migrated MariaDB database for these tests alone (dropped at the end)."""
    yield create_database(FAULT_DB)
    drop_database(FAULT_DB)


@pytest.fixture
def private_redis(tmp_path) -> Iterator[RedisServer]:
    """A redis-server of this test's own, on a free loopback port."""
    server = RedisServer(tmp_path).start()
    yield server
    server.stop()


@pytest.fixture
def settings(base_settings, fault_database_url, private_redis) -> Settings:
    """Fast heartbeats and a fast reaper, so recovery happens in seconds."""
    return base_settings.model_copy(update={
        "database_url": fault_database_url,
        "redis_url": private_redis.url,
        "heartbeat_s": 0.5,
        "stale_after_s": 3.0,
        "reaper_interval_s": 1.0,
        "requeue_queued_after_s": 3.0,
        "llm_timeout_s": 10.0,
        "llm_max_retries": 2,
    })


@pytest.fixture
def launcher(tmp_path, settings) -> Iterator[Launcher]:
    """Starts worker and beat subprocesses with ``settings``; stops them all afterwards.

    Their logs are printed at teardown (pytest shows them when the test failed).
    """
    processes = Launcher(tmp_path, settings)
    yield processes
    processes.stop_all()
    print(processes.logs())


@pytest.fixture
def mariadb_proxy() -> Iterator[TcpProxy]:
    """A cuttable loopback proxy in front of the shared MariaDB."""
    with TcpProxy(MARIADB["host"], MARIADB["port"]) as proxy:
        yield proxy


@pytest.fixture(autouse=True)
def _no_jobs_in_flight(fault_database_url) -> None:
    """Each test starts with no queued or running job left over from an earlier one,
    since reapers and heuristics here look at every job of the database."""
    from sqlalchemy import update

    from shared.db import session_scope
    from shared.models import Job

    with session_scope(fault_database_url) as s:
        s.execute(update(Job).where(Job.status.in_(("queued", "running")))
                  .values(status="cancelled", error_code="test_cleanup"))
