"""A worker's warm shutdown closes its live engines (worker/jobs/live_engines.py).

Real processes: a Celery worker subprocess, a private redis-server, MariaDB, the
offline model over HTTP, and a live dataset on the machine's PostgreSQL reached through
a loopback proxy that keeps the last bytes each client sent. After a job on the live
dataset the worker's pool holds its connections for the next job; on SIGTERM the worker
exits within a bound, every one of them ends with PostgreSQL's Terminate message (a
process that just exits sends none: its sessions end on a lost connection), and no
'sunrise-live' session of the source is left.
"""
from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator

import pytest

from tests.datasets.test_live_datasets import create_live, pg_live  # noqa: F401 -- fixture
from tests.utils.datasets import wait_imported
from tests.utils.tcp_proxy import TcpProxy
from tests.utils.waiting import wait_for_status, wait_until

pytestmark = pytest.mark.fault

TERMINATE = b"X\x00\x00\x00\x04"  # PostgreSQL's Terminate: the client ended its session
# Celery's warm shutdown with no task left, plus at most SHUTDOWN_CLOSE_S of closing.
EXIT_WITHIN_S = 15.0


@pytest.fixture
def pg_proxy() -> Iterator[TcpProxy]:
    with TcpProxy("127.0.0.1", 5432) as proxy:
        yield proxy


def live_sessions(source) -> int:
    """The source's sessions opened by live engines (their application_name)."""
    return source.admin("SELECT count(*) FROM pg_stat_activity WHERE application_name = "
                        f"'sunrise-live' AND datname = '{source.database}'")[0][0]


def test_a_stopped_worker_ends_its_live_sessions_on_the_source(
        client, auth, fake_llm, launcher, pg_live, pg_proxy):  # noqa: F811 -- the fixture
    worker = launcher.worker("live")
    url = pg_live.reader_url.replace("@127.0.0.1:5432/", f"@127.0.0.1:{pg_proxy.port}/")
    dataset_id = create_live(client, auth, url, tables=["measures"])["dataset_id"]
    view = wait_imported(client, auth, dataset_id, timeout=120)
    assert view["status"] == "ready", view
    job = client.post("/v1/jobs", headers=auth, json={
        "message": "How many measures are there?", "dataset_id": dataset_id}).get_json()
    done = wait_for_status(client, auth, job["job_id"], timeout=90)
    assert done["status"] == "succeeded", (done, launcher.logs())
    held = pg_proxy.open_connections()
    assert held and live_sessions(pg_live) >= 1, "the worker's pool keeps its connections"

    started = time.monotonic()
    worker.proc.terminate()
    try:
        worker.proc.wait(EXIT_WITHIN_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the worker still ran {EXIT_WITHIN_S} s after SIGTERM:\n{launcher.logs()}")
    print(f"worker exited {time.monotonic() - started:.1f} s after SIGTERM")
    wait_until(lambda: not held & pg_proxy.open_connections(), timeout=10)
    unclean = {n: pg_proxy.client_tail(n) for n in held
               if not pg_proxy.client_tail(n).endswith(TERMINATE)}
    assert not unclean, f"sessions left without a Terminate: {unclean}\n{launcher.logs()}"
    wait_until(lambda: live_sessions(pg_live) == 0, timeout=10)
