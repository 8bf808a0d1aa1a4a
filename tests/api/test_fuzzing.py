"""Schemathesis' own runner (its coverage and fuzzing phases) against the served
``/openapi.json`` of the real API under gunicorn, with a real key, real MariaDB and
Redis behind it: no 5xx, and every response -- status, content type, headers, body,
each event of an event stream -- as the spec says.

Bounded and repeatable: a fixed seed, deterministic generation, a few examples per
operation, one worker, no example database; a few minutes at most.
"""
from __future__ import annotations

import subprocess
import sys

import httpx
import pytest
import schemathesis
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.utils.live_api import LiveApi

pytestmark = pytest.mark.slow

CHECKS = ("not_a_server_error,status_code_conformance,content_type_conformance,"
          "response_headers_conformance,response_schema_conformance")


@pytest.fixture(scope="module")
def fuzzed_api(base_settings):
    # Small batches, so that generated ones stay cheap to accept.
    with LiveApi(base_settings, max_batch_questions=3) as api:
        yield api


@pytest.fixture(scope="module")
def fuzz_key(base_settings) -> str:
    from shared.db import session_scope
    from shared.keys import create_key

    with session_scope(base_settings.database_url) as s:
        return create_key(s, "fuzzer")


@pytest.mark.timeout(600)
@pytest.mark.usefixtures("celery_worker", "fake_llm")
def test_coverage_and_fuzzing_phases_find_no_5xx_and_no_schema_violation(fuzzed_api,
                                                                         fuzz_key, tmp_path):
    # A worker answers the jobs the fuzzer creates, so their event streams and long-polls
    # end (and are checked whole) instead of running into the request timeout.
    done = subprocess.run(
        [sys.executable, "-m", "schemathesis.cli", "run", f"{fuzzed_api.base_url}/openapi.json",
         "--phases", "coverage,fuzzing", "--checks", CHECKS,
         "--header", f"Authorization: Bearer {fuzz_key}",
         # The fuzzer learns key ids from GET /v1/keys and would revoke its own key, so
         # that every later operation is a 401 it cannot judge: revocation is covered by
         # tests/api/test_keys_api.py instead (its 204, 404 and problem+json).
         "--exclude-name", "DELETE /v1/keys/{key_id}",
         "--max-examples", "50", "--seed", "20261130", "--generation-deterministic",
         "--workers", "1", "--request-timeout", "40",
         "--no-color", "--report-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=540, check=False)
    report = done.stdout[-20000:] + done.stderr[-3000:]
    assert done.returncode == 0, report
    assert "Coverage" in done.stdout and "Fuzzing" in done.stdout, report
    assert " passed" in done.stdout and " failed" not in done.stdout, report


@pytest.mark.usefixtures("celery_worker")
def test_real_event_streams_conform_to_the_spec(live_api, tenant_key, fake_llm):
    # Fuzzing rarely hits a real id; these are real jobs and a real batch, streamed
    # to their end and checked event by event against the spec's event schemas.
    schema = schemathesis.openapi.from_url(f"{live_api.base_url}/openapi.json")
    auth = {"Authorization": f"Bearer {tenant_key}"}
    with live_api.client(tenant_key) as client:
        job = client.ask("How many flights did each carrier fly?")
    batch = httpx.post(f"{live_api.base_url}/v1/batches", headers=auth, timeout=30,
                       json={"questions": ["How many flights?", "How many airports?"]}).json()
    checks = [not_a_server_error, status_code_conformance, content_type_conformance,
              response_headers_conformance, response_schema_conformance]
    for path, params in (("/v1/jobs/{job_id}/events", {"job_id": job["job_id"]}),
                         ("/v1/batches/{batch_id}/events", {"batch_id": batch["batch_id"]})):
        case = schema[path]["GET"].Case(path_parameters=params, headers=auth)
        response = case.call(base_url=live_api.base_url, timeout=120)
        assert response.status_code == 200
        assert response.text.count("\nevent: ") >= 2, response.text[:500]
        case.validate_response(response, checks=checks)
