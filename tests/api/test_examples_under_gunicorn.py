"""Issue 33 item 0: a PATCH with ``examples`` checks their SQL in the SQL sandbox from the
API process. Under gunicorn's gevent workers (``sunrise api``, as in production) the
SQL process's socket pair came out non-blocking, the child ended at once with exit
status 0, and every example was refused as "needed more memory than the SQL sandbox
allows". Run through the real gunicorn + gevent server."""
from __future__ import annotations

import pytest

from sunrise.client import ApiError
from tests.api.test_dataset_client import _client

PLANES_CSV = "tailnum,seats\nN1,100\nN2,180\nN3,50\n"


@pytest.fixture
def client(live_api, celery_worker):
    with _client(live_api) as c:
        yield c


def test_examples_are_checked_and_saved_under_gunicorn_and_gevent(client, tmp_path):
    planes = tmp_path / "planes.csv"
    planes.write_text(PLANES_CSV)
    accepted = client.create_dataset("fleet", [planes])
    events = list(client.dataset_events(accepted["dataset_id"]))
    assert events[-1].event == "ready", events[-1]

    view = client.annotate_dataset(accepted["dataset_id"], {"examples": [
        {"question": "How many seats?", "sql": "SELECT sum(seats) FROM planes"}]})
    assert [e["sql"] for e in view["examples"]] == ["SELECT sum(seats) FROM planes"]

    with pytest.raises(ApiError) as refused:
        client.annotate_dataset(accepted["dataset_id"], {"examples": [
            {"question": "Wings?", "sql": "SELECT sum(wings) FROM planes"}]})
    assert refused.value.status == 422
    assert "wings" in str(refused.value) and "memory" not in str(refused.value)
