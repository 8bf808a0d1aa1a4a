"""Imports run in a process of their own (issue 31 items 3 and 4): a hostile file ends
that process, not the worker and its chat jobs; an import has a deadline, stops when
its dataset is deleted, is attempted at most ``max_attempts`` times, and takes at most
``import_concurrency`` of a worker's threads.

Real MariaDB, a private redis-server, a real Celery worker where it matters (the
hostile file), the importer called directly elsewhere (no worker takes the message).
"""
from __future__ import annotations

import datetime as dt
import threading
from pathlib import Path

import duckdb
import pytest
from sqlalchemy import update

from shared.celery_factory import make_celery
from shared.db import session_scope
from shared.models import Dataset, DatasetVersion, utcnow
from tests.utils.datasets import upload, wait_imported
from tests.utils.hostile_files import corner_to_corner_xlsx
from tests.utils.job_checks import all_in, jobs_by_status
from tests.utils.waiting import wait_until
from worker.datasets.import_run import DatasetImporter
from worker.jobs.events import NullSink
from worker.jobs.reaper import Reaper

pytestmark = pytest.mark.fault

ROWS = 3_000_000


@pytest.fixture(scope="module")
def big_csv(tmp_path_factory) -> bytes:
    """A CSV that takes seconds to import (a fresh import process alone takes about one)."""
    path = tmp_path_factory.mktemp("big") / "events.csv"
    duckdb.sql(f"COPY (SELECT i AS id, i % 97 AS shop, (i * 7) % 1000 / 10.0 AS amount "
               f"FROM range({ROWS}) t(i)) TO '{path}' (HEADER)")
    return path.read_bytes()


def _set(settings, dataset_id: str, **values) -> None:
    with session_scope(settings.database_url) as s:
        s.execute(update(Dataset).where(Dataset.id == dataset_id).values(**values))


def _row(settings, dataset_id: str) -> Dataset:
    with session_scope(settings.database_url) as s:
        row = s.get(Dataset, dataset_id)
        s.expunge(row)
        return row


def _building(settings, dataset_id: str) -> list[Path]:
    return list((Path(settings.data_dir) / dataset_id).glob(".v1.*.building.duckdb*"))


def _in_thread(importer: DatasetImporter, dataset_id: str) -> tuple[threading.Thread, list]:
    outcome: list = []
    thread = threading.Thread(target=lambda: outcome.append(importer.run(dataset_id, 1)))
    thread.start()
    return thread, outcome


def test_a_hostile_xlsx_fails_its_import_and_the_worker_and_its_chat_job_go_on(
        client, auth, settings, fake_llm, launcher):
    fake_llm.latency(1500)  # the chat job is surely in flight while the import runs
    # The sheet's extent check (tests/datasets/test_import_limits.py) refuses this file
    # before it is loaded; here it is lifted, so the file reaches the Excel reader and
    # aborts it: the import's own process is the layer under test.
    worker = launcher.worker("only", import_max_sheet_cells=10**15, import_max_columns=10**6)
    job_id = client.post("/v1/jobs", json={"message": "How many flights are there?"},
                         headers=auth).get_json()["job_id"]
    wait_until(lambda: all_in(settings, [job_id], ("running",)), timeout=60, interval=0.05)
    dataset_id = upload(client, auth, "Corner", ("corner.xlsx", corner_to_corner_xlsx())
                        ).get_json()["dataset_id"]

    view = wait_imported(client, auth, dataset_id, timeout=120)
    assert view["status"] == "failed", view
    assert view["error"]["code"] == "import_out_of_memory", view["error"]
    assert "more memory than an import may use" in view["error"]["detail"]
    wait_until(lambda: all_in(settings, [job_id], ("succeeded", "failed")), timeout=60,
               interval=0.1)
    assert jobs_by_status(settings, [job_id]) == {job_id: "succeeded"}
    assert worker.alive(), "the worker survived the file that aborted its import process"
    assert not _building(settings, dataset_id), "the dead import's files were removed"


def test_an_import_past_its_deadline_is_stopped_and_fails(client, auth, settings, big_csv):
    quick = settings.model_copy(update={"import_deadline_s": 1.0})
    dataset_id = upload(client, auth, "Slow", ("events.csv", big_csv)).get_json()["dataset_id"]
    assert DatasetImporter(quick, NullSink()).run(dataset_id, 1) == "failed"
    row = _row(settings, dataset_id)
    assert row.error["code"] == "import_timed_out", row.error
    assert "stopped after 1 s" in row.error["detail"]
    assert not _building(settings, dataset_id)
    assert not (Path(settings.data_dir) / dataset_id / "v1.duckdb").exists()


def test_deleting_a_dataset_stops_its_import(client, auth, settings, big_csv):
    dataset_id = upload(client, auth, "Gone", ("events.csv", big_csv)).get_json()["dataset_id"]
    thread, outcome = _in_thread(DatasetImporter(settings, NullSink()), dataset_id)
    wait_until(lambda: _building(settings, dataset_id), timeout=60, interval=0.02)
    assert client.delete(f"/v1/datasets/{dataset_id}", headers=auth).status_code == 204
    thread.join(60)
    assert outcome == [None], "no longer wanted: nothing recorded"
    with session_scope(settings.database_url) as s:
        assert s.get(DatasetVersion, (dataset_id, 1)) is None
    assert not (Path(settings.data_dir) / dataset_id / "v1.duckdb").exists()
    assert not _building(settings, dataset_id)


def test_the_reaper_gives_up_an_import_after_max_attempts(client, auth, settings):
    dataset_id = upload(client, auth, "Crashy", ("c.csv", "a\n1\n")).get_json()["dataset_id"]
    stale = utcnow() - dt.timedelta(seconds=60)
    _set(settings, dataset_id, import_attempts=settings.max_attempts, heartbeat_at=stale)
    assert Reaper(settings, make_celery(settings)).run_once()["imports"] == 0
    row = _row(settings, dataset_id)
    assert (row.status, row.building_version) == ("failed", None)
    assert row.error["code"] == "import_abandoned"
    assert (f"attempted {settings.max_attempts} times; the last attempt ended without a "
            "result (the worker stopped)") in row.error["detail"]


def test_a_redelivered_import_past_max_attempts_fails_instead_of_running(client, auth,
                                                                          settings):
    dataset_id = upload(client, auth, "Again", ("a.csv", "a\n1\n")).get_json()["dataset_id"]
    _set(settings, dataset_id, import_attempts=settings.max_attempts)
    assert DatasetImporter(settings, NullSink()).run(dataset_id, 1) == "failed"
    assert _row(settings, dataset_id).error["code"] == "import_abandoned"


def test_each_claim_counts_an_attempt(client, auth, settings):
    dataset_id = upload(client, auth, "Once", ("o.csv", "a\n1\n")).get_json()["dataset_id"]
    assert DatasetImporter(settings, NullSink()).run(dataset_id, 1) == "ready"
    assert _row(settings, dataset_id).import_attempts == 1


def test_imports_beyond_the_cap_wait_unclaimed_instead_of_taking_a_thread(client, auth,
                                                                           settings, big_csv):
    from worker.datasets.import_run import ImportSlotsBusy

    importer = DatasetImporter(settings.model_copy(update={"import_concurrency": 1}),
                               NullSink())
    first = upload(client, auth, "First", ("events.csv", big_csv)).get_json()["dataset_id"]
    second = upload(client, auth, "Second", ("s.csv", "a\n1\n")).get_json()["dataset_id"]
    thread, outcome = _in_thread(importer, first)
    wait_until(lambda: _building(settings, first), timeout=60, interval=0.02)

    with pytest.raises(ImportSlotsBusy):
        importer.run(second, 1)
    row = _row(settings, second)
    assert (row.heartbeat_at, row.import_attempts) == (None, 0), "not claimed, not counted"

    thread.join(120)
    assert outcome == ["ready"]
    assert importer.run(second, 1) == "ready", "a slot is free again"


def test_a_warm_shutdown_hands_its_import_back_instead_of_finishing_it(client, auth, settings,
                                                                        launcher, big_csv):
    """SIGTERM (a deploy, a scale-down) waits for chat jobs, not for imports: the import's
    process is stopped, its claim released uncounted, and another worker builds it."""
    first = launcher.worker("first", import_threads=1)
    dataset_id = upload(client, auth, "Moved", ("events.csv", big_csv)).get_json()["dataset_id"]
    wait_until(lambda: _building(settings, dataset_id), timeout=60, interval=0.02)
    first.stop(grace_s=60)
    assert first.proc.returncode == 0, "it shut down by itself"
    row = _row(settings, dataset_id)
    assert (row.status, row.version, row.heartbeat_at, row.import_attempts) == (
        "importing", None, None, 0), "handed back, not built, not counted"

    launcher.worker("second")
    view = wait_imported(client, auth, dataset_id, timeout=120)
    assert (view["status"], view["version"]) == ("ready", 1), view
    assert view["tables"][0]["rows"] == ROWS


def test_an_import_past_the_cap_on_a_real_worker_is_sent_again_and_built(client, auth,
                                                                          settings, launcher,
                                                                          big_csv):
    """The task side of the cap: the import that found no slot is re-sent with a
    countdown (Celery's retry) and its message acknowledged; it is built once a slot
    frees, its attempt uncounted."""
    worker = launcher.worker("capped", import_concurrency=1, import_busy_retry_s=0.5)
    first = upload(client, auth, "Big", ("events.csv", big_csv)).get_json()["dataset_id"]
    wait_until(lambda: _building(settings, first), timeout=60, interval=0.02)
    second = upload(client, auth, "Small", ("s.csv", "a\n1\n")).get_json()["dataset_id"]
    for dataset_id in (first, second):
        assert wait_imported(client, auth, dataset_id, timeout=120)["status"] == "ready"
    assert _row(settings, second).import_attempts == 1
    assert "Retry in" in worker.log_path.read_text(errors="replace")
