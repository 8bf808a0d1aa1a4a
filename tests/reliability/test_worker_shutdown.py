"""A worker's warm shutdown closes its live engines (worker/jobs/live_engines.py).

Real processes: a Celery worker subprocess, a private redis-server, MariaDB, the
offline model over HTTP, and a live dataset on the machine's PostgreSQL or MariaDB
reached through a loopback proxy that keeps the last bytes each client sent. After a job
on the live dataset the worker's pool holds its connections for the next job; on SIGTERM
the worker exits within a bound, every one of them ends with the protocol's goodbye
(PostgreSQL's Terminate, MySQL's COM_QUIT; a process that just exits sends none: its
sessions end on a lost connection), and no session of the engine is left on the source.
A worker whose Spark Connect server is gone exits as promptly: its Connect client, left
open, retried the dead server for minutes at interpreter exit.
"""
from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator

import pytest

from tests.datasets.test_live_datasets import (  # noqa: F401 -- fixtures
    READER,
    create_live,
    live_source,
    maria_live,
    pg_live,
)
from tests.utils.datasets import wait_imported
from tests.utils.tcp_proxy import TcpProxy
from tests.utils.waiting import wait_for_status, wait_until

pytestmark = pytest.mark.fault

PORTS = {"postgresql": 5432, "mariadb": 3306}
# The last message of a client that ends its session: PostgreSQL's Terminate, MySQL's
# COM_QUIT packet.
GOODBYE = {"postgresql": b"X\x00\x00\x00\x04", "mariadb": b"\x01\x00\x00\x00\x01"}
# Celery's warm shutdown with no task left, plus at most SHUTDOWN_CLOSE_S of closing.
EXIT_WITHIN_S = 15.0


@pytest.fixture
def source_proxy(live_source) -> Iterator[TcpProxy]:  # noqa: F811 -- the fixture
    with TcpProxy("127.0.0.1", PORTS[live_source.kind]) as proxy:
        yield proxy


def live_sessions(source) -> int:
    """The source's sessions opened by live engines (PostgreSQL: their application_name;
    MariaDB: the reader's)."""
    if source.kind == "postgresql":
        return source.admin("SELECT count(*) FROM pg_stat_activity WHERE application_name = "
                            f"'sunrise-live' AND datname = '{source.database}'")[0][0]
    return source.admin("SELECT count(*) FROM information_schema.PROCESSLIST WHERE "
                        f"USER = '{READER}' AND DB = '{source.database}'")[0][0]


def stop_within(worker, launcher, bound_s: float) -> None:
    """SIGTERM ``worker`` and fail unless it exits within ``bound_s``."""
    started = time.monotonic()
    worker.proc.terminate()
    try:
        worker.proc.wait(bound_s)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the worker still ran {bound_s} s after SIGTERM:\n{launcher.logs()}")
    print(f"worker exited {time.monotonic() - started:.1f} s after SIGTERM")


def test_a_stopped_worker_ends_its_live_sessions_on_the_source(
        client, auth, fake_llm, launcher, live_source, source_proxy):  # noqa: F811
    worker = launcher.worker("live")
    port = PORTS[live_source.kind]
    url = live_source.reader_url.replace(f"@127.0.0.1:{port}/",
                                         f"@127.0.0.1:{source_proxy.port}/")
    dataset_id = create_live(client, auth, url, tables=["measures"])["dataset_id"]
    view = wait_imported(client, auth, dataset_id, timeout=120)
    assert view["status"] == "ready", view
    job = client.post("/v1/jobs", headers=auth, json={
        "message": "How many measures are there?", "dataset_id": dataset_id}).get_json()
    done = wait_for_status(client, auth, job["job_id"], timeout=90)
    assert done["status"] == "succeeded", (done, launcher.logs())
    held = source_proxy.open_connections()
    assert held and live_sessions(live_source) >= 1, "the worker's pool keeps its connections"

    stop_within(worker, launcher, EXIT_WITHIN_S)
    wait_until(lambda: not held & source_proxy.open_connections(), timeout=10)
    goodbye = GOODBYE[live_source.kind]
    unclean = {n: source_proxy.client_tail(n) for n in held
               if not source_proxy.client_tail(n).endswith(goodbye)}
    assert not unclean, f"sessions left without a goodbye: {unclean}\n{launcher.logs()}"
    wait_until(lambda: live_sessions(live_source) == 0, timeout=10)


@pytest.mark.slow
@pytest.mark.timeout(900)  # a Spark server of its own: minutes to start on a busy host
def test_a_worker_whose_spark_server_is_gone_exits_promptly(
        client, auth, fake_llm, launcher, tmp_path):
    from pyspark.sql.connect.session import SparkSession

    from tests.utils.spark_server import spark_connect_server

    with spark_connect_server(tmp_path) as server:
        admin = SparkSession.builder.remote(server.url).create()
        try:
            admin.sql("CREATE TABLE measures (id INT, region STRING) USING parquet")
            admin.sql("INSERT INTO measures VALUES (1, 'north'), (2, 'south')")
        finally:
            admin.stop()  # closed while its server runs, as the worker's must be
        worker = launcher.worker("spark")
        dataset_id = create_live(client, auth, server.url, tables=["measures"])["dataset_id"]
        view = wait_imported(client, auth, dataset_id, timeout=180)
        assert view["status"] == "ready", (view, launcher.logs())
        marker = fake_llm.scenario("spark-shutdown", [
            {"tool_calls": [{"sql": "SELECT count(*) AS n FROM measures"}]},
            {"text": '{"answerText": "There are 2 measures.", "charts": []}'}])
        job = client.post("/v1/jobs", headers=auth, json={
            "message": f"How many measures are there? {marker}",
            "dataset_id": dataset_id}).get_json()
        done = wait_for_status(client, auth, job["job_id"], timeout=180)
        assert done["status"] == "succeeded", (done, launcher.logs())
    # The server is stopped: the worker's engine on it is open and cannot reach it.
    stop_within(worker, launcher, EXIT_WITHIN_S)
