"""Live datasets through the API: created on the real PostgreSQL and MariaDB servers of
this machine (a scratch database and roles per session, dropped after), introspected on
a real worker, asked through the offline model about rows inserted after they were
created (no refresh), a role that can write refused at creation, and a cancelled job's
query stopped on the source. Nothing is mocked."""
from __future__ import annotations

import datetime as dt
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.utils.datasets import sse_events, wait_imported
from tests.utils.scratch_sources import admin_sql, create_scratch, drop_scratch, source_url
from tests.utils.waiting import wait_for_status, wait_until

pytestmark = pytest.mark.usefixtures("celery_worker", "fake_llm")

PASSWORD = "w1re:p@ss/wd%"
SCRATCH = f"sunrise_livewire_{os.getpid()}"
READER = f"lw_ro_{os.getpid()}"
WRITER = f"lw_rw_{os.getpid()}"


@dataclass
class LiveSource:
    kind: str
    database: str
    reader_url: str
    writer_url: str

    def admin(self, *statements: str) -> list[tuple]:
        return admin_sql(self.kind, self.database, *statements)

    def running(self, needle: str = "", role: str | None = None) -> list[str]:
        """Statements the roles (or ``role`` only, PostgreSQL) run now in the database."""
        if self.kind == "postgresql":
            by_role = f"AND usename = '{role}' " if role else ""
            rows = self.admin("SELECT query FROM pg_stat_activity WHERE state = 'active' "
                              f"AND datname = '{self.database}' {by_role}"
                              "AND pid <> pg_backend_pid()")
        else:
            rows = self.admin("SELECT INFO FROM information_schema.PROCESSLIST WHERE "
                              f"COMMAND = 'Query' AND DB = '{self.database}' "
                              "AND ID <> CONNECTION_ID()")
        return [r[0] for r in rows if r[0] and needle in r[0]]


def _url(kind: str, user: str, database: str) -> str:
    return source_url(kind, user, PASSWORD, database)


_MEASURES = ("CREATE TABLE measures (id INTEGER PRIMARY KEY, region VARCHAR(20), "
             "amount DECIMAL(10, 2))",
             "INSERT INTO measures VALUES (1, 'north', 10.5), (2, 'south', 3), (3, 'north', 1)")


@pytest.fixture(scope="module")
def pg_live() -> Iterator[LiveSource]:
    name = f"{SCRATCH}_pg"
    create_scratch("postgresql", name, READER, WRITER, PASSWORD)
    source = LiveSource("postgresql", name, _url("postgresql", READER, name),
                        _url("postgresql", WRITER, name))
    source.admin(*_MEASURES,
                 f'GRANT CONNECT ON DATABASE "{name}" TO "{READER}", "{WRITER}"',
                 f'GRANT USAGE ON SCHEMA public TO "{READER}", "{WRITER}"',
                 f'GRANT SELECT ON ALL TABLES IN SCHEMA public TO "{READER}", "{WRITER}"',
                 f'GRANT INSERT ON measures TO "{WRITER}"')
    yield source
    drop_scratch("postgresql", name, READER, WRITER)


@pytest.fixture(scope="module")
def maria_live() -> Iterator[LiveSource]:
    name = f"{SCRATCH}_maria"
    create_scratch("mariadb", name, READER, WRITER, PASSWORD)
    source = LiveSource("mariadb", name, _url("mariadb", READER, name),
                        _url("mariadb", WRITER, name))
    source.admin(*_MEASURES)
    yield source
    drop_scratch("mariadb", name, READER, WRITER)


@pytest.fixture(params=["pg_live", "maria_live"])
def live_source(request) -> LiveSource:
    return request.getfixturevalue(request.param)


def create_live(client, auth, url: str, **source) -> dict:
    resp = client.post("/v1/datasets", headers=auth, json={
        "name": "Live", "source": {"url": url, "mode": "live", **source}})
    assert resp.status_code == 202, resp.get_data(as_text=True)
    assert PASSWORD not in resp.get_data(as_text=True)
    return resp.get_json()


def _instant(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_a_live_dataset_answers_from_rows_inserted_after_it_was_created(
        client, auth, live_source):
    live_source.admin("DELETE FROM measures WHERE id > 3")
    dataset_id = create_live(client, auth, live_source.reader_url,
                             tables=["measures"])["dataset_id"]
    view = wait_imported(client, auth, dataset_id)
    assert view["status"] == "ready" and view["version"] == 1, view
    assert view["mode"] == "live" and view["warnings"] == []
    expected = {"postgresql": ("PostgreSQL", "postgres"), "mariadb": ("MariaDB", "mysql")}
    assert (view["engine"]["name"], view["engine"]["dialect"]) == expected[live_source.kind]
    assert view["engine"]["version"][0].isdigit(), view["engine"]
    assert {t["name"]: t["rows"] for t in view["tables"]} == {"measures": 3}
    assert PASSWORD not in str(view)

    live_source.admin("INSERT INTO measures VALUES (4, 'east', 2), (5, 'west', 7)")
    job = client.post("/v1/jobs", headers=auth, json={
        "message": "How many measures are there?", "dataset_id": dataset_id}).get_json()
    done = wait_for_status(client, auth, job["job_id"], timeout=60)
    assert done["status"] == "succeeded", done
    assert (done["dataset_id"], done["dataset_version"]) == (dataset_id, 1)
    assert "5" in done["result"]["answer_text"], done["result"]
    # data_as_of: the moment its first query ran on the source, within the job's run.
    as_of = _instant(done["data_as_of"])
    assert _instant(done["started_at"]) <= as_of <= _instant(done["finished_at"])
    (terminal,) = [data for name, data in sse_events(client, auth, f"/v1/jobs/{job['job_id']}/events")
                   if name == "succeeded"]
    assert terminal["data_as_of"] == done["data_as_of"]
    history = client.get(f"/v1/conversations/{done['conversation_id']}",
                         headers=auth).get_json()["messages"]
    assert history[-1]["role"] == "assistant" and history[-1]["data_as_of"] == done["data_as_of"]
    assert client.get(f"/v1/datasets/{dataset_id}", headers=auth).get_json()["version"] == 1

    # A refresh introspects again: a new version with the source's rows as they are now.
    refresh = client.post(f"/v1/datasets/{dataset_id}/refresh", headers=auth)
    assert refresh.status_code == 202 and refresh.get_json()["version"] == 2
    view = wait_imported(client, auth, dataset_id)
    assert view["version"] == 2 and view["mode"] == "live", view
    assert {t["name"]: t["rows"] for t in view["tables"]} == {"measures": 5}


def test_a_role_that_can_write_is_refused_at_creation_unless_allowed(client, auth, live_source):
    resp = client.post("/v1/datasets", headers=auth, json={
        "name": "Writable", "source": {"url": live_source.writer_url, "mode": "live"}})
    assert resp.status_code == 422, resp.get_data(as_text=True)
    problem = resp.get_json()
    assert problem["type"].endswith("/writable_role") and "INSERT" in problem["privilege"].upper()
    assert "INSERT" in problem["detail"].upper() and "GRANT SELECT" in problem["detail"]
    assert PASSWORD not in resp.get_data(as_text=True)
    assert client.get("/v1/datasets", headers=auth).get_json()["items"] == []

    dataset_id = create_live(client, auth, live_source.writer_url,
                             allow_writable_role=True)["dataset_id"]
    view = wait_imported(client, auth, dataset_id)
    assert view["status"] == "ready" and view["mode"] == "live", view
    (warning,) = view["warnings"]
    assert "can write" in warning and "INSERT" in warning.upper()


def test_a_snapshot_dataset_shows_duckdb_and_its_import_time_as_data_as_of(
        client, auth, pg_live):
    resp = client.post("/v1/datasets", headers=auth, json={
        "name": "Copy", "source": {"url": pg_live.reader_url, "tables": ["measures"]}})
    assert resp.status_code == 202, resp.get_data(as_text=True)
    view = wait_imported(client, auth, resp.get_json()["dataset_id"])
    assert view["mode"] == "snapshot" and view["engine"]["name"] == "DuckDB", view
    assert view["engine"]["dialect"] == "duckdb" and view["refresh"] is None
    job = client.post("/v1/jobs", headers=auth, json={
        "message": "How many measures are there?", "dataset_id": view["dataset_id"]}).get_json()
    done = wait_for_status(client, auth, job["job_id"], timeout=60)
    assert done["status"] == "succeeded", done
    # The import ended before the job was even submitted.
    assert _instant(done["data_as_of"]) <= _instant(done["created_at"])
    assert _instant(done["data_as_of"]) >= _instant(view["created_at"])


def test_cancelling_a_job_stops_its_query_on_the_source(client, auth, fake_llm, settings,
                                                        monkeypatch, pg_live):
    # The SQL tool's own limit far beyond every wait below: only the cancel can end it.
    monkeypatch.setattr(settings, "sql_timeout_s", 300.0)
    dataset_id = create_live(client, auth, pg_live.reader_url, tables=["measures"])["dataset_id"]
    assert wait_imported(client, auth, dataset_id)["status"] == "ready"
    assert pg_live.running(role=READER) == []
    slow = ("SELECT count(*) AS n FROM measures a, generate_series(1, 2000000000) AS g "
            "WHERE g > a.id")
    marker = fake_llm.scenario("live-slow", [{"tool_calls": [{"sql": slow}]},
                                             {"text": '{"answerText": "done", "charts": []}'}])
    job = client.post("/v1/jobs", headers=auth, json={
        "message": f"Count slowly {marker}", "dataset_id": dataset_id}).get_json()
    # The model's statement on the source (streamed, under the row cap's LIMIT).
    wait_until(lambda: pg_live.running(role=READER, needle="generate_series"), timeout=60,
               interval=0.1)
    time.sleep(0.5)
    assert pg_live.running(role=READER), "the query should still be running"
    assert client.post(f"/v1/jobs/{job['job_id']}/cancel", headers=auth).status_code == 202
    # pg_stat_activity: no query of the job's role left (its pooled connection idles).
    wait_until(lambda: not pg_live.running(role=READER), timeout=30, interval=0.1)
    done = wait_for_status(client, auth, job["job_id"], timeout=60)
    assert done["status"] == "cancelled", done
    assert pg_live.running(role=READER) == []


@pytest.mark.parametrize(("source", "words"), [
    ({"url": "sc://spark:15002"}, "live only"),
    ({"url": "postgresql://u:p@db/x", "allow_writable_role": True}, "live datasets only"),
    ({"url": "postgresql://u:p@db/x", "mode": "mirror"}, "mode"),
])
def test_live_only_options_are_refused_for_a_snapshot(client, auth, source, words):
    resp = client.post("/v1/datasets", headers=auth, json={"name": "No", "source": source})
    assert resp.status_code == 422 and words in resp.get_json()["detail"], resp.get_json()


def test_a_worker_closes_a_live_engine_nobody_used_for_a_while(settings, pg_live):
    from worker.jobs.data_source import TenantDatasets

    clock = [1000.0]
    datasets = TenantDatasets(settings)
    datasets.live.clock = lambda: clock[0]
    key = ("ds-idle", 1)
    try:
        engine = datasets.live.acquire(key, pg_live.reader_url)
        datasets.live.release(key)
        assert datasets.live.run(key, pg_live.reader_url, "job-1", "SELECT count(*) FROM measures"
                                 ).rows[0][0] >= 3
        clock[0] += datasets.live.idle_close_s - 1
        assert datasets.live.close_idle() == 0
        clock[0] += 2
        assert datasets.live.close_idle() == 1
        assert engine.run("SELECT 1").is_error  # closed: its connections are gone
    finally:
        datasets.close()


def test_a_hold_on_an_engine_closed_meanwhile_ends_quietly(settings, pg_live):
    """A cold shutdown closes engines a job still holds: the job's release neither
    raises nor counts down the engine opened again under the same key."""
    from worker.jobs.data_source import TenantDatasets

    datasets = TenantDatasets(settings)
    key = ("ds-closed", 1)
    try:
        held = datasets.live.acquire(key, pg_live.reader_url)
        datasets.live.close()  # the shutdown, while the job holds it
        datasets.live.release(key, held)  # was a KeyError
        again = datasets.live.acquire(key, pg_live.reader_url)
        datasets.live.release(key, held)  # the old hold: not this engine's
        assert datasets.live.close_idle() == 0 and datasets.live._users[key] == 1
        datasets.live.release(key, again)
        assert datasets.live._users[key] == 0
    finally:
        datasets.close()


@pytest.fixture(scope="module")
def spark_live(spark_server, celery_app) -> Iterator[object]:
    """A Spark Connect session of the data owner's, with ``live_ds.measures``. After the
    module, the worker's live engines are closed while the server still runs: a Connect
    client left open calls the server again at interpreter exit, and retries for minutes
    once the session's server has stopped."""
    from pyspark.sql.connect.session import SparkSession

    from worker.tasks import runners_for

    session = SparkSession.builder.remote(spark_server.url).create()
    session.sql("CREATE DATABASE IF NOT EXISTS live_ds")
    session.sql("CREATE TABLE live_ds.measures (id INT, region STRING, amount DECIMAL(10,2)) "
                "USING parquet")
    session.sql("INSERT INTO live_ds.measures VALUES (1, 'north', 10.5), (2, 'south', 3), "
                "(3, 'north', 1)")
    yield session
    runners_for(celery_app).jobs.data.live.close()
    session.sql("DROP DATABASE live_ds CASCADE")
    session.stop()


@pytest.mark.slow
def test_a_spark_dataset_answers_in_spark_sql_from_rows_inserted_after_it_was_created(
        client, auth, fake_llm, spark_server, spark_live):
    dataset_id = create_live(client, auth, spark_server.url,
                             tables=["live_ds.measures"])["dataset_id"]
    view = wait_imported(client, auth, dataset_id, timeout=120)
    assert view["status"] == "ready" and view["mode"] == "live", view
    # Spark has no role model to read: no role check, no warning.
    assert view["warnings"] == []
    assert view["engine"]["name"] == "Spark" and view["engine"]["dialect"] == "spark", view
    assert view["engine"]["version"].startswith("4."), view["engine"]
    assert [t["rows"] for t in view["tables"]] == [3], view["tables"]

    spark_live.sql("INSERT INTO live_ds.measures VALUES (4, 'east', 2), (5, 'west', 7)")
    sql = "SELECT count(*) AS n FROM live_ds.measures"
    marker = fake_llm.scenario("spark-count", [
        {"tool_calls": [{"sql": sql}]},
        {"text": '{"answerText": "There are 5 measures.", "charts": []}'}])
    job = client.post("/v1/jobs", headers=auth, json={
        "message": f"How many measures are there? {marker}",
        "dataset_id": dataset_id}).get_json()
    done = wait_for_status(client, auth, job["job_id"], timeout=120)
    assert done["status"] == "succeeded", done
    assert done["data_as_of"] and done["dataset_version"] == 1
    requests = fake_llm.message_requests()
    system = str(requests[0]["system"])
    assert f"This is Spark {view['engine']['version']}; write Spark SQL" in system, system
    # The model was given the count Spark computed now, not the 3 rows introspected.
    tool_results = [block for r in requests[1:] for m in r["messages"]
                    if isinstance(m["content"], list) for block in m["content"]
                    if block.get("type") == "tool_result"]
    assert tool_results and "5" in str(tool_results[0]["content"]), tool_results
    assert client.get(f"/v1/datasets/{dataset_id}", headers=auth).get_json()["version"] == 1




@pytest.mark.slow
@pytest.mark.timeout(900)  # the first Spark test starts the server (minutes on a busy host)
def test_cancelling_a_job_interrupts_its_spark_query_on_the_server(
        client, auth, fake_llm, settings, monkeypatch, spark_server, spark_live):
    # The SQL tool's own limit far beyond every wait below: only the cancel can end it.
    monkeypatch.setattr(settings, "sql_timeout_s", 300.0)
    dataset_id = create_live(client, auth, spark_server.url,
                             tables=["live_ds.measures"])["dataset_id"]
    # Introspection is a few Spark jobs per column: slow on a loaded two-core host.
    assert wait_imported(client, auth, dataset_id, timeout=300)["status"] == "ready"
    assert spark_server.running_jobs() == []
    # Minutes of tasks from the first second (a scan of 10^12 generated rows, no
    # exchange to plan first), little memory.
    slow = "SELECT sum(id % 7) AS n FROM range(0, 1000000000000, 1, 2)"
    marker = fake_llm.scenario("spark-slow", [{"tool_calls": [{"sql": slow}]},
                                              {"text": '{"answerText": "done", "charts": []}'}])
    job = client.post("/v1/jobs", headers=auth, json={
        "message": f"Count slowly {marker}", "dataset_id": dataset_id}).get_json()

    def ours() -> list[dict]:
        """Running Spark jobs carrying a Sunrise operation tag (the engine's addTag)."""
        return [j for j in spark_server.running_jobs()
                if any("_Tag_sunrise-" in tag for tag in j.get("jobTags", []))]

    wait_until(ours, timeout=90, interval=0.2)
    assert client.post(f"/v1/jobs/{job['job_id']}/cancel", headers=auth).status_code == 202
    # The server's own monitoring API: no job of the query is running any more.
    wait_until(lambda: spark_server.running_jobs() == [], timeout=60, interval=0.2)
    done = wait_for_status(client, auth, job["job_id"], timeout=60)
    assert done["status"] == "cancelled", done
    assert spark_server.running_jobs() == []
