"""A schedule's condition on a live dataset runs on the source, in a real worker
subprocess: false (no row yet) skips the run without a model call, true once rows were
inserted on the source after the dataset was created delivers the report. A condition
the source's statement check refuses is refused when saved (in the dataset's dialect),
one that writes through a function fails the run in its read-only session. Real
PostgreSQL and MariaDB (tests/live/conftest.py's scratch databases), nothing mocked."""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.datasets.test_live_datasets import create_live
from tests.live.conftest import maria_source, pg_source, source  # noqa: F401
from tests.schedules.test_schedule_delivery import _schedule, _wait_run
from tests.utils.datasets import wait_imported

NEW_ROWS = "SELECT count(*) FROM orders WHERE id > 3000"  # the fixture's are 1..3000


@pytest.fixture
def settings(delivery_settings):
    return delivery_settings


@pytest.fixture
def live_id(client, auth, launcher, source) -> Iterator[str]:  # noqa: F811
    dataset_id = create_live(client, auth, source.reader_url, tables=["orders"])["dataset_id"]
    view = wait_imported(client, auth, dataset_id)
    assert view["status"] == "ready" and view["mode"] == "live", view
    yield dataset_id
    source.admin_sql("DELETE FROM orders WHERE id > 3000")


def _run(client, auth, sid: str) -> dict:
    run = client.post(f"/v1/schedules/{sid}/run", headers=auth)
    assert run.status_code == 202, run.get_json()
    return _wait_run(client, auth, sid, run.get_json()["run_id"])


def test_a_live_condition_is_evaluated_on_the_source(client, auth, receiver, fake_llm, source,  # noqa: F811
                                                     live_id):
    sid = _schedule(client, auth, receiver, dataset_id=live_id,
                    questions=["How many orders are there?"],
                    deliver=[{"type": "webhook", "url": f"{receiver.url}/hook"}],
                    condition={"sql": NEW_ROWS, "op": ">", "value": 0})["schedule_id"]
    before_posts = len(receiver.posts)
    skipped = _run(client, auth, sid)
    assert skipped["status"] == "skipped" and skipped["condition_value"] == 0, skipped
    assert fake_llm.message_requests() == [] and len(receiver.posts) == before_posts

    source.admin_sql("INSERT INTO orders (id, region, amount, qty) VALUES "
                     "(3001, 'east', 1.5, 1), (3002, 'east', 2.5, 2)")
    delivered = _run(client, auth, sid)
    assert delivered["status"] == "delivered", delivered
    assert delivered["condition_value"] == 2 and delivered["batch_id"], delivered
    assert fake_llm.message_requests() and len(receiver.posts) == before_posts + 1


def test_a_condition_the_source_would_refuse_is_refused_when_saved(client, auth, receiver,
                                                                  source, live_id):  # noqa: F811
    """Checked in the dataset's dialect (DuckDB would take ``nextval``)."""
    resp = client.post("/v1/schedules", headers=auth, json={
        "name": "Counter", "questions": ["Orders?"], "cron": "0 7 * * *", "dataset_id": live_id,
        "deliver": [{"type": "webhook", "url": f"{receiver.url}/hook"}],
        "condition": {"sql": "SELECT nextval('counter')", "op": ">", "value": 0}})
    assert resp.status_code == 422, resp.get_data(as_text=True)
    engine = "PostgreSQL" if source.kind == "postgresql" else "MariaDB"
    assert resp.get_json()["detail"] == (f"condition.sql: the function nextval() is not "
                                         f"allowed on {engine} here; compute the answer "
                                         "without it"), resp.get_json()


def test_a_condition_that_writes_fails_the_run_in_its_read_only_session(
        client, auth, launcher, receiver, fake_llm, pg_source):  # noqa: F811
    """``stamp()`` is a function that inserts: the statement check cannot see it, the
    read-only session refuses it."""
    dataset_id = create_live(client, auth, pg_source.reader_url, tables=["orders"])["dataset_id"]
    assert wait_imported(client, auth, dataset_id)["status"] == "ready"
    sid = _schedule(client, auth, receiver, dataset_id=dataset_id,
                    deliver=[{"type": "webhook", "url": f"{receiver.url}/hook"}],
                    condition={"sql": "SELECT stamp()", "op": ">", "value": 0})["schedule_id"]
    failed = _run(client, auth, sid)
    assert failed["status"] == "failed" and failed["batch_id"] is None, failed
    assert failed["reason"].startswith("condition: ") and "read-only" in failed["reason"], failed
    assert fake_llm.message_requests() == []
    assert pg_source.admin_sql("SELECT count(*) FROM audit") == [(0,)]
