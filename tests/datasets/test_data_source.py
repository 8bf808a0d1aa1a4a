"""Where a job's data comes from: the version it pinned, in a sandbox that reads that file
only, with a prompt byte-identical for every job on the version; a bounded LRU of open
sandboxes whose eviction never fails a job holding one."""
from __future__ import annotations

import datetime as dt

import pytest

from engine.datasets import version_path
from shared.errors import JobFailure
from tests.utils.datasets import upload, wait_imported
from worker.jobs.data_source import TenantDatasets
from worker.jobs.store import ClaimedJob

pytestmark = pytest.mark.usefixtures("celery_worker")


def _job(dataset_id: str | None, version: int | None) -> ClaimedJob:
    return ClaimedJob(id="job", tenant_id=1, conversation_id="c", message="q", model="m",
                      attempt=1, dataset_id=dataset_id, dataset_version=version)


@pytest.fixture
def two_datasets(client, auth) -> list[str]:
    ids = []
    for name, text in (("apples.csv", "kind,weight\ngala,120\nfuji,NA\n"),
                       ("pears.csv", "kind,price\nbosc,1.5\n")):
        dataset_id = upload(client, auth, name, (name, text)).get_json()["dataset_id"]
        assert wait_imported(client, auth, dataset_id)["status"] == "ready"
        ids.append(dataset_id)
    return ids


def test_a_job_reads_its_pinned_version_only_and_gets_a_byte_stable_prompt(settings,
                                                                             two_datasets):
    apples, pears = two_datasets
    data = TenantDatasets(settings, today=lambda: dt.date(2026, 11, 30))
    try:
        first, second = data.for_job(_job(apples, 1)), data.for_job(_job(apples, 1))
        assert first.system_prompt == second.system_prompt
        assert "CREATE TABLE apples" in first.system_prompt and "2026-11-30" in first.system_prompt
        assert "pears" not in first.system_prompt
        result = first.sandbox.run("SELECT count(weight) AS n FROM apples")
        assert not result.is_error and result.rows == [(1,)]
        other_file = version_path(settings.data_dir, pears, 1)
        for sql in (f"SELECT * FROM '{other_file}'", f"ATTACH '{other_file}' AS p",
                    f"SELECT * FROM read_csv('{settings.data_dir}/{pears}/sources/0-pears.csv')"):
            refused = first.sandbox.run(sql)
            assert refused.is_error, sql
        with pytest.raises(JobFailure) as missing:
            data.for_job(_job(apples, 7))
        assert missing.value.code == "dataset_not_found"
    finally:
        data.close()


def test_an_evicted_sandbox_reopens_for_the_job_that_holds_it(settings, two_datasets):
    apples, pears = two_datasets
    data = TenantDatasets(settings, capacity=1)
    try:
        held = data.for_job(_job(apples, 1))
        other = data.for_job(_job(pears, 1))  # closes the apples sandbox: capacity 1
        assert list(data._open) == [(pears, 1)]
        assert held.sandbox.run("SELECT count(*) FROM apples").rows == [(2,)]
        assert other.sandbox.run("SELECT price FROM pears").rows == [(1.5,)]
        assert len(data._open) == 1
    finally:
        data.close()
