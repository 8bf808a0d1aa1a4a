"""Row policies on live datasets: PostgreSQL queries are rewritten in its own dialect and run
on the real server; a MariaDB dataset under a policy refuses every query, saying why."""
from __future__ import annotations

import pytest

from tests.datasets.test_data_source import _job
from tests.datasets.test_live_datasets import create_live, maria_live, pg_live  # noqa: F401
from tests.policies.conftest import viewer
from tests.utils.datasets import wait_imported
from worker.jobs.data_source import TenantDatasets

pytestmark = pytest.mark.usefixtures("celery_worker", "fake_llm")

POLICY = {"policies": [{"table": "measures", "filter": "region = {user.region}"}]}
ESCAPES = [
    "SELECT region FROM measures",
    'SELECT region FROM "measures"',
    "SELECT region FROM public.measures",
    "SELECT region FROM measures UNION ALL SELECT region FROM public.measures",
    "SELECT (SELECT max(m2.region) FROM measures m2 WHERE m2.id = m.id) FROM measures m",
    "WITH t AS (SELECT * FROM measures) SELECT region FROM t",
]
REFUSED = [
    "SELECT relname, reltuples FROM pg_catalog.pg_class",
    "SELECT * FROM pg_stats",
    "SELECT table_name FROM information_schema.tables",
    "WITH measures AS (SELECT * FROM public.measures) SELECT region FROM measures",
    "SELECT * FROM postgres.public.measures",
]


def _policed_data(settings, client, auth, url, principal):
    dataset_id = create_live(client, auth, url, tables=["measures"])["dataset_id"]
    assert wait_imported(client, auth, dataset_id)["status"] == "ready"
    response = client.patch(f"/v1/datasets/{dataset_id}", headers=auth, json=POLICY)
    assert response.status_code == 200, response.get_data(as_text=True)
    data = TenantDatasets(settings, principal_of=lambda session, job: principal)
    return data, data.for_job(_job(dataset_id, 1))


def test_postgres_queries_see_only_the_allowed_rows(settings, client, auth, pg_live):  # noqa: F811
    pg_live.admin("DELETE FROM measures WHERE id > 3")
    data, job = _policed_data(settings, client, auth, pg_live.reader_url,
                              viewer(region="north"))
    try:
        for sql in ESCAPES:
            result = job.sandbox.run(sql)
            assert not result.is_error, (sql, result.error)
            assert {r[0] for r in result.rows} == {"north"}, sql
        for sql in REFUSED:
            result = job.sandbox.run(sql)
            assert result.is_error and "south" not in (result.error or ""), sql
        crafted = TenantDatasets(settings, principal_of=lambda s, j: viewer(
            region="north' OR '1'='1"))
        try:
            attack = crafted.for_job(_job(job.sandbox.inner.key[0], 1))
            assert attack.sandbox.run("SELECT count(*) FROM measures").rows == [(0,)]
        finally:
            crafted.close()
        assert "'south'" not in job.system_prompt
    finally:
        data.close()


def test_a_mariadb_dataset_under_a_policy_refuses_queries(settings, client, auth,
                                                          maria_live):  # noqa: F811
    data, job = _policed_data(settings, client, auth, maria_live.reader_url,
                              viewer(region="north"))
    try:
        result = job.sandbox.run("SELECT region FROM measures")
        assert result.is_error and result.rows == []
        assert "cannot be policed" in result.error
    finally:
        data.close()
