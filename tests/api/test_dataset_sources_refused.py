"""POST /v1/datasets with a database URL a hostile tenant writes: 422 saying why, nothing kept,
nothing sent to a worker (issue 31 items 1 and 2). 127.0.0.1 is listed in the test
settings; the app's database and Redis stay refused all the same."""
from __future__ import annotations

import pytest
from sqlalchemy import func, select
from sqlalchemy.engine import make_url

from shared.db import session_scope
from shared.models import Dataset
from shared.outbound import endpoint_of


def _datasets(settings) -> int:
    with session_scope(settings.database_url) as s:
        return s.scalar(select(func.count()).select_from(Dataset))


def _post(client, auth, url: str, tables=None):
    return client.post("/v1/datasets", headers=auth,
                       json={"name": "Probe", "source": {"url": url, "tables": tables}})


def _refused(settings, resp, *words: str) -> dict:
    body = resp.get_json()
    assert resp.status_code == 422, body
    assert resp.mimetype == "application/problem+json"
    assert body["type"].endswith("/source_refused")
    for word in words:
        assert word in body["detail"]
    return body


def test_the_app_database_is_refused_and_nothing_is_kept(client, auth, settings):
    before = _datasets(settings)
    host, port = endpoint_of(settings.database_url)
    name = make_url(settings.database_url).database
    for url in (f"mysql+pymysql://root@{host}:{port}/{name}",
                f"mysql://root@localhost:{port}/{name}"):
        _refused(settings, _post(client, auth, url, ["api_keys"]), "the app's database")
    # Through another database on the same server, naming the app's tables by schema.
    _refused(settings, _post(client, auth, f"mysql://root@{host}:{port}/mysql",
                             [f"{name}.api_keys"]), "the app's database")
    assert _datasets(settings) == before


def test_redis_is_refused_though_its_host_is_listed(client, auth, settings):
    host, port = endpoint_of(settings.redis_url)
    _refused(settings, _post(client, auth, f"mysql://x@{host}:{port}/x"), "the app's Redis")


def test_a_loopback_name_is_refused_when_nothing_is_listed(settings, auth):
    from api import create_app

    strict = create_app(settings=settings.model_copy(update={"outbound_allow": []}))
    resp = _post(strict.test_client(), auth, "postgresql://reader@localhost:5432/shop")
    _refused(settings, resp, "loopback address", "SUNRISE_OUTBOUND_ALLOW")


def test_metadata_is_refused_even_inside_a_listed_range(settings, auth):
    from api import create_app

    wide = create_app(settings=settings.model_copy(update={"outbound_allow": ["169.254.0.0/16"]}))
    resp = _post(wide.test_client(), auth, "mysql://x@169.254.169.254:80/latest")
    _refused(settings, resp, "cloud metadata")


@pytest.mark.parametrize("query, parameter", [
    ("init_command=INSERT%20INTO%20api_keys%20VALUES%20(1)", "init_command"),
    ("local_infile=1", "local_infile"), ("unix_socket=/run/mysqld/mysqld.sock", "unix_socket"),
    ("read_default_file=/etc/mysql/debian.cnf", "read_default_file")])
def test_mysql_url_parameters_are_refused_by_name(client, auth, settings, query, parameter):
    body = _refused(settings, _post(client, auth, f"mysql://x@127.0.0.1:3306/shop?{query}"),
                    repr(parameter))
    assert body["parameter"] == parameter


@pytest.mark.parametrize("url", [
    "postgresql://reader@127.0.0.1:5432/shop?options=-c%20search_path%3Dpg_catalog",
    "postgresql://reader@127.0.0.1:5432/shop?service=app",
    "postgresql://reader@127.0.0.1:5432/shop?passfile=/root/.pgpass",
    "postgresql://reader@/shop?host=/var/run/postgresql",
    "mysql://root@/mysql?unix_socket=/run/mysqld/mysqld.sock"])
def test_postgres_parameters_and_hostless_urls_are_refused(client, auth, settings, url):
    before = _datasets(settings)
    _refused(settings, _post(client, auth, url))
    assert _datasets(settings) == before
