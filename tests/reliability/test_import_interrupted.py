"""Fault: a worker is SIGKILLed in the middle of a dataset import.

Real processes (a Celery worker, then another, and beat running the reaper), a private
redis-server, MariaDB. The killed worker leaves a half-built temporary file and a
stale heartbeat; the reaper sends the import again, the second worker claims it,
clears what the first left and builds the version once. Nothing accepted is lost and
no half-built version is ever served.
"""
from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests.utils.datasets import upload
from tests.utils.waiting import wait_until

pytestmark = pytest.mark.fault

ROWS = 3_000_000


@pytest.fixture(scope="module")
def big_csv(tmp_path_factory) -> bytes:
    path = tmp_path_factory.mktemp("big") / "events.csv"
    duckdb.sql(f"COPY (SELECT i AS id, i % 97 AS shop, (i * 7) % 1000 / 10.0 AS amount, "
               f"'2024-01-01'::DATE + (i % 365)::INT AS day FROM range({ROWS}) t(i)) "
               f"TO '{path}' (HEADER)")
    return path.read_bytes()


def test_an_import_whose_worker_is_killed_is_built_once_by_another(client, auth, settings,
                                                                    launcher, big_csv):
    first = launcher.worker("first", import_threads=1)
    dataset_id = upload(client, auth, "Events", ("events.csv", big_csv)).get_json()["dataset_id"]
    folder = Path(settings.data_dir) / dataset_id
    wait_until(lambda: list(folder.glob(".v1.*.building.duckdb")), timeout=60, interval=0.05)
    first.kill()
    view = client.get(f"/v1/datasets/{dataset_id}", headers=auth).get_json()
    assert view["status"] == "importing" and view["version"] is None, "killed mid-import"
    assert not (folder / "v1.duckdb").exists()

    launcher.beat()
    launcher.worker("second")

    def ended():
        current = client.get(f"/v1/datasets/{dataset_id}", headers=auth).get_json()
        return current if current["status"] != "importing" else None

    view = wait_until(ended, timeout=120, interval=0.2)
    assert view["status"] == "ready" and view["version"] == 1, view
    assert view["tables"][0]["rows"] == ROWS
    assert sorted(p.name for p in folder.iterdir()) == ["sources", "v1.duckdb"]
