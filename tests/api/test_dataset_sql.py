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



# -- row policies, masks and access: run_sql reads what the caller's jobs would ---------

POLICED = ("region,amount,customer\n"
           + "".join(f"{r},{i * 10},cust-{r}-{i}\n" for i in range(1, 4) for r in ("EU", "US", "APAC")))


def _viewer(tenant_id: int, groups=("sales",)) -> Principal:
    return Principal(tenant_id=tenant_id, user_id=9, external_id="eu-1", role="viewer",
                     groups=groups, attributes={"region": "EU"},
                     scopes=frozenset({"ask", "datasets"}))


@pytest.fixture
def policed(client, auth, settings, tenant_key) -> tuple[str, int]:
    """A dataset under ``region = {user.region}`` with ``customer`` redacted, and its tenant
    (with the viewers ``eu-1``, group sales, and ``eu-2``, group finance, both in EU)."""
    from tests.people.helpers import make_user, tenant_of

    created = upload(client, auth, "policed", ("sales.csv", POLICED))
    dataset_id = wait_imported(client, auth, created.get_json()["dataset_id"])["dataset_id"]
    response = client.patch(f"/v1/datasets/{dataset_id}", headers=auth, json={
        "policies": [{"table": "sales", "filter": "region = {user.region}"}],
        "masks": [{"table": "sales", "column": "customer", "mask": "redact"}]})
    assert response.status_code == 200, response.get_data(as_text=True)
    tenant_id, _name = tenant_of(settings, tenant_key)
    for external_id, group in (("eu-1", "sales"), ("eu-2", "finance")):
        make_user(settings, tenant_id, external_id, "viewer", groups=(group,),
                  attributes={"region": "EU"})
    return dataset_id, tenant_id


def _sql(client, auth, dataset_id, sql, user: str | None = None):
    headers = {**auth, "Sunrise-User": user} if user else auth
    return client.post(f"/v1/datasets/{dataset_id}/sql", headers=headers, json={"sql": sql})


@pytest.mark.parametrize("sql", [
    "SELECT * FROM sales ORDER BY amount",
    "SELECT region, sum(amount) AS total, string_agg(customer, '|') AS c FROM sales GROUP BY 1",
    "SELECT * FROM sales s1 WHERE EXISTS (SELECT 1 FROM sales s2 WHERE s2.region <> s1.region)"
    " UNION ALL SELECT * FROM sales"])
def test_a_viewer_under_a_policy_reads_only_their_rows_and_masked_values(
        client, auth, policed, sql):
    dataset_id, _tenant = policed
    owner = _sql(client, auth, dataset_id, sql)
    assert owner.status_code == 200 and "cust-US" in owner.get_json()["text"]  # exempt
    response = _sql(client, auth, dataset_id, sql, "eu-1")
    assert response.status_code == 200, response.get_data(as_text=True)
    text = response.get_json()["text"]
    assert "EU" in text and "[redacted]" in text, text
    for hidden in ("US", "APAC", "cust-"):
        assert hidden not in text, (hidden, text)


def test_a_viewer_under_a_policy_cannot_read_around_it(client, auth, policed):
    dataset_id, _tenant = policed
    for sql in ("SUMMARIZE sales", "SELECT * FROM information_schema.tables",
                "SELECT * FROM duckdb_tables()"):
        response = _sql(client, auth, dataset_id, sql, "eu-1")
        assert response.status_code == 422, (sql, response.get_data(as_text=True))
        assert "row policies" in response.get_json()["detail"]
    failed = _sql(client, auth, dataset_id, "SELECT CAST(region AS INT) FROM sales", "eu-1")
    assert failed.status_code == 422 and "US" not in failed.get_data(as_text=True)


def test_a_dataset_not_granted_is_a_404_for_run_sql(client, auth, policed):
    dataset_id, _tenant = policed
    assert client.patch(f"/v1/datasets/{dataset_id}", headers=auth,
                        json={"access": {"groups": ["finance"]}}).status_code == 200
    response = _sql(client, auth, dataset_id, "SELECT 1", "eu-1")
    assert response.status_code == 404, response.get_data(as_text=True)
    granted = _sql(client, auth, dataset_id, "SELECT count(*) AS n FROM sales", "eu-2")
    assert granted.status_code == 200 and granted.get_json()["text"].splitlines()[2] == "3"


def test_the_mcp_backend_refuses_what_is_not_granted_and_polices_the_rest(app, client, auth,
                                                                       policed):
    """The MCP ``run_sql`` tool's in-process backend, called with the request's principal
    (the default dataset included: it is not reached around ``access``)."""
    from api.mcp.in_process import InProcessBackend
    from api.resources import resources
    from shared.errors import NotFound

    dataset_id, tenant_id = policed
    assert client.patch(f"/v1/datasets/{dataset_id}", headers=auth,
                        json={"default": True}).status_code == 200
    with app.app_context():
        backend = InProcessBackend(resources(), _viewer(tenant_id), call=None)
        text = backend.run_sql(dataset_id, "SELECT customer, region FROM sales")["text"]
        assert "[redacted]" in text and "EU" in text
        assert "US" not in text and "cust-" not in text, text
        assert client.patch(f"/v1/datasets/{dataset_id}", headers=auth,
                            json={"access": {"groups": ["finance"]}}).status_code == 200
        for target in (dataset_id, None):
            with pytest.raises(NotFound):
                run_dataset_sql(resources(), _viewer(tenant_id), target, "SELECT 1")
