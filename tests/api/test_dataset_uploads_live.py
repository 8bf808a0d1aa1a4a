"""Uploads over real HTTP to the API under gunicorn (gevent workers), as curl sends them:
a multipart CSV is streamed to the data dir and imported by a real worker; a body over
SUNRISE_MAX_UPLOAD_MB is a 413 problem and keeps nothing."""
from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.utils.live_api import LiveApi
from tests.utils.waiting import wait_until


@pytest.fixture(scope="module")
def small_upload_api(base_settings):
    with LiveApi(base_settings, max_upload_mb=1) as api:
        yield api


def _uploads(settings) -> list[str]:
    folder = Path(settings.data_dir) / "uploads"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


@pytest.mark.usefixtures("celery_worker")
def test_a_csv_posted_like_curl_is_imported(small_upload_api, tenant_key, base_settings):
    auth = {"Authorization": f"Bearer {tenant_key}"}
    csv = "city,population\nOslo,709000\nBergen,NA\nTromso,77000\n"
    with httpx.Client(base_url=small_upload_api.base_url, headers=auth, timeout=30) as http:
        resp = http.post("/v1/datasets", data={"name": "Cities"},
                         files=[("file", ("cities.csv", csv.encode(), "text/csv"))])
        assert resp.status_code == 202, resp.text
        link = resp.json()["links"]["self"]

        def ready():
            view = http.get(link).json()
            return view if view["status"] != "importing" else None

        view = wait_until(ready, timeout=60, interval=0.1)
    assert view["status"] == "ready", view
    (table,) = view["tables"]
    assert {c["name"]: c["type"] for c in table["columns"]}["population"] in {"INTEGER", "BIGINT"}
    assert _uploads(base_settings) == []


def test_an_upload_over_the_limit_is_413_over_http(small_upload_api, tenant_key, base_settings):
    auth = {"Authorization": f"Bearer {tenant_key}"}
    big = b"a,b\n" + b"12345,67890\n" * 250_000  # 3 MB
    with httpx.Client(base_url=small_upload_api.base_url, headers=auth, timeout=30) as http:
        resp = http.post("/v1/datasets", data={"name": "Big"},
                         files=[("file", ("big.csv", big, "text/csv"))])
        assert resp.status_code == 413, resp.text
        assert resp.headers["content-type"] == "application/problem+json"
        assert "1 MB" in resp.json()["detail"]
        assert http.get("/v1/datasets").json()["items"] == []
    assert _uploads(base_settings) == []
