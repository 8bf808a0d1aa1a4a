"""Fault: the API's MariaDB goes away, then comes back.

The API reaches MariaDB through a TCP proxy. While it is cut, a request that needs the
database is answered 503 problem+json with a ``Retry-After``, not a 500 with a logged
traceback: a client can tell "try again shortly" from a bug. Once the proxy is back,
the next request is served (the pool's pre-ping replaces the dead connections).
"""
from __future__ import annotations

import uuid

import pytest
from sqlalchemy.engine import make_url

from api.problems import DATABASE_RETRY_AFTER_S

pytestmark = pytest.mark.fault


def test_a_database_outage_is_a_503_to_retry_and_passes(settings, auth, mariadb_proxy):
    from api import create_app

    database = make_url(settings.database_url).database
    via_proxy = f"mysql+pymysql://root@127.0.0.1:{mariadb_proxy.port}/{database}"
    app = create_app(settings=settings.model_copy(update={"database_url": via_proxy}))
    client = app.test_client()
    unknown = f"/v1/jobs/{uuid.uuid4()}"

    assert client.get(unknown, headers=auth).status_code == 404  # pool warm, key known
    mariadb_proxy.cut()
    try:
        down = client.get(unknown, headers=auth)
    finally:
        mariadb_proxy.restore()
    assert down.status_code == 503, down.get_data(as_text=True)
    assert down.headers["Content-Type"] == "application/problem+json"
    assert down.headers["Retry-After"] == str(DATABASE_RETRY_AFTER_S)
    problem = down.get_json()
    assert problem["type"].endswith("/database_unavailable") and "try again" in problem["detail"]

    assert client.get(unknown, headers=auth).status_code == 404  # back: served again
