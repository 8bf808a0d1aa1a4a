"""run_sql and verified queries on live datasets: the statement runs on the real
PostgreSQL or MariaDB source (tests/live/conftest.py's scratch databases) with the model's
safety -- rows inserted after the dataset was created are there, a write hidden in a CTE
is refused with the tool's text and leaves the source as it was, the caller's row
policy applies (PostgreSQL) or refuses (MariaDB), a source that does not answer is a 503
within the connect timeout; Spark SQL over Spark Connect answers run_sql too. Real worker
import, nothing mocked."""
from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest

from engine.live.live_engine import WATCHDOG_GRACE_S
from shared.db import session_scope
from shared.models import Dataset
from shared.sealed import seal
from tests.datasets.test_live_datasets import create_live, spark_live  # noqa: F401
from tests.live.conftest import maria_source, pg_source, source  # noqa: F401
from tests.people.helpers import make_user, tenant_of
from tests.utils.datasets import wait_imported

pytestmark = pytest.mark.usefixtures("celery_worker")

CONNECT_TIMEOUT_S = 3.0
NEW_IDS = "id > 3000"  # the fixture's orders are ids 1..3000


@pytest.fixture
def settings(base_settings):
    """The API's: short outbound connect and SQL timeouts, so a silent source is quick
    to see."""
    return base_settings.model_copy(update={"outbound_connect_timeout_s": CONNECT_TIMEOUT_S,
                                            "sql_timeout_s": 4.0})


@pytest.fixture
def live_id(client, auth, source) -> Iterator[str]:  # noqa: F811
    """A live dataset over the source's ``orders``, ready; rows it inserts are removed."""
    dataset_id = create_live(client, auth, source.reader_url, tables=["orders"])["dataset_id"]
    view = wait_imported(client, auth, dataset_id)
    assert view["status"] == "ready" and view["mode"] == "live", view
    yield dataset_id
    source.admin_sql(f"DELETE FROM orders WHERE {NEW_IDS}")


def _sql(client, headers, dataset_id, sql):
    return client.post(f"/v1/datasets/{dataset_id}/sql", headers=headers, json={"sql": sql})


def test_run_sql_answers_rows_inserted_after_creation(client, auth, source, live_id):  # noqa: F811
    source.admin_sql("INSERT INTO orders (id, region, amount, qty) VALUES "
                     "(3001, 'east', 1.5, 1), (3002, 'east', 2.5, 2)")
    response = _sql(client, auth, live_id, "SELECT region, count(*) AS n, sum(qty) AS q "
                                           f"FROM orders WHERE {NEW_IDS} GROUP BY region")
    assert response.status_code == 200, response.get_data(as_text=True)
    body = response.get_json()
    assert (body["dataset_id"], body["dataset_version"], body["rows"]) == (live_id, 1, 1)
    assert body["text"].splitlines()[:3] == ["query_id=1 rows=1 shown=1", "region,n,q",
                                             "east,2,3"]


@pytest.mark.parametrize("sql", [
    "WITH gone AS (DELETE FROM orders WHERE id = 1 RETURNING id) SELECT count(*) FROM gone",
    "SELECT 1; DELETE FROM orders WHERE id = 1",
    "UPDATE orders SET qty = 0 WHERE id = 1"])
def test_a_write_is_refused_with_the_tools_text_and_changes_nothing(client, auth, source,  # noqa: F811
                                                                    live_id, sql):
    response = _sql(client, auth, live_id, sql)
    assert response.status_code == 422, response.get_data(as_text=True)
    assert response.get_json()["detail"].startswith("error: "), response.get_json()
    assert source.admin_sql("SELECT count(*), min(qty) FROM orders WHERE id = 1") == [(1, 1)]


def test_the_mcp_tool_runs_on_the_source(app, client, auth, settings, tenant_key, live_id):
    from api.mcp.in_process import InProcessBackend
    from api.resources import resources
    from shared.principal import Principal

    tenant_id, _name = tenant_of(settings, tenant_key)
    caller = Principal(tenant_id=tenant_id, role="admin", scopes=frozenset({"datasets"}))
    with app.app_context():
        text = InProcessBackend(resources(), caller, call=None).run_sql(
            live_id, "SELECT count(*) AS n FROM orders")["text"]
    assert text.splitlines()[:3] == ["query_id=1 rows=1 shown=1", "n", "3000"]


def test_a_row_policy_binds_the_caller_on_the_source(client, auth, settings, tenant_key,
                                                     source, live_id):  # noqa: F811
    """PostgreSQL: the statement is rewritten in its dialect, the viewer counts their
    region's rows only; MariaDB: refused, as a job's query under a policy is."""
    response = client.patch(f"/v1/datasets/{live_id}", headers=auth, json={
        "policies": [{"table": "orders", "filter": "region = {user.region}"}]})
    assert response.status_code == 200, response.get_data(as_text=True)
    tenant_id, _name = tenant_of(settings, tenant_key)
    make_user(settings, tenant_id, "north-1", "viewer", attributes={"region": "north"})
    as_viewer = {**auth, "Sunrise-User": "north-1"}
    sql = "SELECT count(*) AS n FROM orders"
    owner = _sql(client, auth, live_id, sql)
    assert owner.status_code == 200 and owner.get_json()["text"].splitlines()[2] == "3000"
    viewer = _sql(client, as_viewer, live_id, sql)
    if source.kind == "postgresql":
        assert viewer.status_code == 200, viewer.get_data(as_text=True)
        assert viewer.get_json()["text"].splitlines()[2] == "1000"
    else:
        assert viewer.status_code == 422, viewer.get_data(as_text=True)
        assert "cannot be policed" in viewer.get_json()["detail"]


def test_verified_queries_are_checked_on_the_source(client, auth, source, live_id):  # noqa: F811
    path = f"/v1/datasets/{live_id}/verified-queries"
    fails = client.post(path, headers=auth, json={
        "question": "Orders by colour?", "sql": "SELECT colour, count(*) FROM orders GROUP BY 1"})
    assert fails.status_code == 422, fails.get_data(as_text=True)
    assert fails.get_json()["detail"].startswith("The SQL failed on version 1: ")
    assert "colour" in fails.get_json()["error"]
    writes = client.post(path, headers=auth, json={
        "question": "Clear them?", "sql": "WITH d AS (DELETE FROM orders RETURNING id) "
                                          "SELECT count(*) FROM d"})
    assert writes.status_code == 422, writes.get_data(as_text=True)
    sql = "SELECT region, count(*) AS n FROM orders GROUP BY region ORDER BY region"
    kept = client.post(path, headers=auth, json={"question": "Orders per region?", "sql": sql})
    assert kept.status_code == 201, kept.get_data(as_text=True)
    items = client.get(path, headers=auth).get_json()["items"]
    assert [(i["question"], i["sql"]) for i in items] == [("Orders per region?", sql)]
    assert source.admin_sql("SELECT count(*) FROM orders") == [(3000,)]


@pytest.mark.slow
@pytest.mark.timeout(900)  # may start the session's Spark Connect server (about a minute)
def test_run_sql_on_a_spark_dataset_runs_spark_sql_on_the_server(client, auth, spark_server,
                                                                 spark_live):  # noqa: F811
    dataset_id = create_live(client, auth, spark_server.url,
                             tables=["live_ds.measures"])["dataset_id"]
    assert wait_imported(client, auth, dataset_id, timeout=120)["status"] == "ready"
    spark_live.sql("INSERT INTO live_ds.measures VALUES (4, 'east', 2), (5, 'west', 7)")
    response = _sql(client, auth, dataset_id, "SELECT count(*) AS n FROM live_ds.measures")
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.get_json()["text"].splitlines()[:3] == ["query_id=1 rows=1 shown=1", "n",
                                                            "5"]
    refused = _sql(client, auth, dataset_id, "INSERT INTO live_ds.measures VALUES (6, 'x', 1)")
    assert refused.status_code == 422 and refused.get_json()["detail"].startswith("error: ")
    assert spark_live.sql("SELECT count(*) FROM live_ds.measures").collect()[0][0] == 5


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that takes TCP connections and never says a word."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    yield listener.getsockname()[1]
    listener.close()


@pytest.mark.parametrize("kind", ["refused", "silent"])
def test_a_source_that_does_not_answer_is_a_503_saying_so(client, auth, settings, source,  # noqa: F811
                                                          live_id, silent_port, kind):
    """The dataset's sealed URL pointed at a closed port, or at one that never answers."""
    port = silent_port if kind == "silent" else _closed_port()
    with session_scope(settings.database_url) as s:
        s.get(Dataset, live_id).source_url = seal(
            settings.secret_keys, f"{source.kind}://nobody:secret-pw@127.0.0.1:{port}/nothing")
    started = time.monotonic()
    response = _sql(client, auth, live_id, "SELECT 1")
    elapsed = time.monotonic() - started
    assert response.status_code == 503, response.get_data(as_text=True)
    body = response.get_json()
    assert body["detail"].startswith(f"Dataset {live_id}'s source cannot be reached"), body
    assert "secret-pw" not in response.get_data(as_text=True)
    assert response.headers["Retry-After"] == "5"
    # a silent server: the connect timeout, or reads capped by the SQL timeout
    assert elapsed < CONNECT_TIMEOUT_S + settings.sql_timeout_s + 3 * WATCHDOG_GRACE_S + 7, elapsed
    check = client.post(f"/v1/datasets/{live_id}/verified-queries", headers=auth,
                        json={"question": "One?", "sql": "SELECT 1"})
    assert check.status_code == 503 and "cannot be reached" in check.get_json()["detail"]


def _closed_port() -> int:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # nothing listens there now
    return port


@pytest.fixture
def rationed_url(maria_source) -> Iterator[str]:  # noqa: F811
    """A MariaDB reader whose hourly query allowance ends while its session is prepared
    (the server answers, authenticates it, then refuses its next statement)."""
    user = "sunrise_rationed"
    maria_source.admin_sql(f"DROP USER IF EXISTS '{user}'@'%'",
                           f"CREATE USER '{user}'@'%' IDENTIFIED BY 'rationed-pw' "
                           "WITH MAX_QUERIES_PER_HOUR 2",
                           f"GRANT SELECT ON `{maria_source.database}`.* TO '{user}'@'%'")
    yield f"mariadb://{user}:rationed-pw@127.0.0.1:3306/{maria_source.database}"
    maria_source.admin_sql(f"DROP USER IF EXISTS '{user}'@'%'")


def test_a_source_refusing_the_session_after_connecting_is_a_503_naming_its_reason(
        client, auth, settings, maria_source, rationed_url):  # noqa: F811
    dataset_id = create_live(client, auth, maria_source.reader_url,
                             tables=["orders"])["dataset_id"]
    assert wait_imported(client, auth, dataset_id)["status"] == "ready"
    with session_scope(settings.database_url) as s:
        s.get(Dataset, dataset_id).source_url = seal(settings.secret_keys, rationed_url)

    response = _sql(client, auth, dataset_id, "SELECT 1")
    assert response.status_code == 503, response.get_data(as_text=True)
    assert response.mimetype == "application/problem+json"
    detail = response.get_json()["detail"]
    assert detail.startswith(f"Dataset {dataset_id}'s source cannot be reached"), detail
    assert "max_queries_per_hour" in detail, detail
    assert "rationed-pw" not in response.get_data(as_text=True)
