"""Fixtures for operating Sunrise: worker processes on a broker of their own.

Worker processes started here consume a second leased Redis database, so the
in-process ``celery_worker`` of this session never takes their jobs (and they never
take its). They share the session's MariaDB database and offline model.
"""
from __future__ import annotations

import contextlib
import socket
import uuid
from collections.abc import Iterator

import pytest

from bench.worker_fleet import WorkerProcess, lease_redis_db


@pytest.fixture(scope="session")
def ops_settings(base_settings):
    url, release = lease_redis_db()
    yield base_settings.model_copy(update={"redis_url": url})
    release()


@pytest.fixture
def ops_client(ops_settings):
    from api import create_app

    app = create_app(settings=ops_settings)
    app.config["TESTING"] = True
    return app.test_client()


@pytest.fixture
def ops_auth(ops_settings) -> tuple[dict[str, str], str]:
    """Headers of a fresh tenant's key, and the tenant's name."""
    from shared.db import session_scope
    from shared.keys import create_key

    name = f"ops-{uuid.uuid4().hex[:10]}"
    with session_scope(ops_settings.database_url) as s:
        return {"Authorization": f"Bearer {create_key(s, name)}"}, name


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def start_worker(ops_settings, tmp_path) -> Iterator:
    """``start_worker(**env)`` starts a ready worker process; all are stopped afterwards."""
    started: list[WorkerProcess] = []

    def start(concurrency: int = 4, **env: str) -> WorkerProcess:
        worker = WorkerProcess(ops_settings, tmp_path, concurrency=concurrency, **env)
        started.append(worker)
        worker.wait_ready()  # bounded by progress, not by one figure: see its doc
        return worker

    yield start
    for worker in started:
        if worker.proc.poll() is None:
            with contextlib.suppress(TimeoutError):  # stop() killed it; nothing left to do
                worker.stop(timeout=30)
