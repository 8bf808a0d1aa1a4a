"""POST /v1/datasets/{id}/sql: one guarded, bounded SELECT with the model's result text
(real worker import, real sandbox)."""
from __future__ import annotations

import pytest

from api.services.dataset_sql import run_dataset_sql
from shared.errors import Forbidden
from shared.principal import Principal
from tests.utils.datasets import other_tenant, upload, wait_imported

pytestmark = pytest.mark.usefixtures("celery_worker")

CSV = "city,sales\nOslo,10\nLima,32\nOslo,5\n"


@pytest.fixture
def dataset_id(client, auth) -> str:
    created = upload(client, auth, "shop", ("sales.csv", CSV))
    assert created.status_code == 202, created.get_data(as_text=True)
    view = wait_imported(client, auth, created.get_json()["dataset_id"])
    assert view["status"] == "ready", view
    return view["dataset_id"]


def test_a_select_answers_the_tools_text(client, auth, dataset_id):
    resp = client.post(f"/v1/datasets/{dataset_id}/sql", headers=auth,
                       json={"sql": "SELECT city, sum(sales) AS total FROM sales "
                                    "GROUP BY city ORDER BY city"})
    assert resp.status_code == 200, resp.get_data(as_text=True)
    body = resp.get_json()
    assert body["rows"] == 2 and body["dataset_id"] == dataset_id
    assert body["text"].splitlines()[:4] == ["query_id=1 rows=2 shown=2", "city,total",
                                             "Lima,32", "Oslo,15"]


@pytest.mark.parametrize("sql", ["DELETE FROM sales", "SELECT 1; SELECT 2",
                                 "SELECT * FROM read_csv('/etc/passwd')",
                                 "SELECT nope FROM sales"])
def test_refused_statements_are_422_with_the_tools_error(client, auth, dataset_id, sql):
    resp = client.post(f"/v1/datasets/{dataset_id}/sql", headers=auth, json={"sql": sql})
    assert resp.status_code == 422, resp.get_data(as_text=True)
    assert resp.get_json()["detail"].startswith("error: ")


def test_foreign_and_unknown_datasets_and_bad_bodies(client, auth, settings, dataset_id):
    foreign = client.post(f"/v1/datasets/{dataset_id}/sql", headers=other_tenant(settings),
                          json={"sql": "SELECT 1"})
    assert foreign.status_code == 404
    assert client.post("/v1/datasets/nope/sql", headers=auth,
                       json={"sql": "SELECT 1"}).status_code == 404
    for body in ({}, {"sql": ""}, {"sql": 5}, {"sql": "SELECT 1", "x": 1}):
        assert client.post(f"/v1/datasets/{dataset_id}/sql", headers=auth,
                           json=body).status_code == 422


def test_without_the_datasets_scope_it_is_forbidden(app, settings, dataset_id):
    from api.resources import resources

    with app.app_context(), pytest.raises(Forbidden, match="datasets"):
        run_dataset_sql(resources(), Principal(tenant_id=1, scopes=frozenset({"ask"})),
                        dataset_id, "SELECT 1")
