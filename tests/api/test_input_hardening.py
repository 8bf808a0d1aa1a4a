"""Input hardening: schemathesis drives every operation of ``/openapi.json`` with
generated (valid and invalid) requests against the real app, MariaDB and Redis. No
response may be a 5xx, and every response must match the spec: documented status,
content type and body schema. Plus the hard limits: body size, message length, and the
conversation-history token budget.
"""
from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

pytestmark = pytest.mark.slow

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_headers_conformance, response_schema_conformance]


@pytest.fixture
def hardened_app(settings):
    """The real app, with a small batch cap so generated batches stay cheap to accept."""
    from api import create_app

    app = create_app(settings=settings.model_copy(update={"max_batch_questions": 3}))
    app.config["TESTING"] = True
    return app


@pytest.fixture
def api_schema(hardened_app):
    return schemathesis.openapi.from_wsgi("/openapi.json", hardened_app)


def _exercise(operation, mode: GenerationMode, auth: dict) -> None:
    @given(case=operation.as_strategy(generation_mode=mode))
    @hypothesis_settings(max_examples=10, deadline=None, derandomize=True, database=None,
                         suppress_health_check=list(HealthCheck))
    def one(case) -> None:
        response = case.call(headers=auth)
        case.validate_response(response, checks=CHECKS)

    try:
        one()
    except Unsatisfiable:
        # An operation without parameters or body has no invalid input to generate.
        if mode is not GenerationMode.NEGATIVE:
            raise


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE],
                         ids=["valid", "invalid"])
def test_generated_requests_get_no_5xx_and_conforming_responses(api_schema, auth, mode):
    # Driven from a plain test (not schemathesis' pytest plugin, whose lazy loader does not
    # run on pytest 9): every documented operation, valid and invalid inputs alike.
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert {f"{op.method.upper()} {op.path}" for op in operations} >= {
        "POST /v1/jobs", "GET /v1/jobs/{job_id}", "POST /v1/jobs/{job_id}/cancel"}
    failures = []
    for operation in operations:
        try:
            _exercise(operation, mode, auth)
        except Exception as exc:  # gather all, then report every failing operation at once
            failures.append(f"{operation.method.upper()} {operation.path}: {exc}")
    assert not failures, "\n\n".join(failures)


def test_a_body_over_the_size_limit_is_413_problem_json(client, auth, settings):
    big = "x" * (settings.max_body_bytes + 1)
    resp = client.post("/v1/jobs", data=f'{{"message": "{big}"}}', headers=auth,
                       content_type="application/json")
    assert resp.status_code == 413
    assert resp.mimetype == "application/problem+json"
    assert resp.get_json()["status"] == 413


def test_a_message_over_the_length_limit_is_422(client, auth):
    from api.schemas.jobs import MAX_MESSAGE_CHARS

    resp = client.post("/v1/jobs", json={"message": "x" * (MAX_MESSAGE_CHARS + 1)},
                       headers=auth)
    assert resp.status_code == 422
    assert "message" in resp.get_json()["detail"]


def test_history_sent_to_the_model_stays_within_its_token_budget(settings):
    from shared.db import session_scope
    from shared.keys import get_or_create_tenant
    from shared.models import Conversation, Message, new_id
    from worker.jobs.history import estimate_tokens, load_history

    with session_scope(settings.database_url) as s:
        tenant = get_or_create_tenant(s, "history-budget")
        conversation = Conversation(id=new_id(), tenant_id=tenant.id, title="long")
        s.add(conversation)
        s.flush()
        for turn in range(12):
            job_id = new_id()
            s.add(Message(conversation_id=conversation.id, job_id=job_id, role="user",
                          text=f"question {turn} " + "q" * 3000))
            s.add(Message(conversation_id=conversation.id, job_id=job_id, role="assistant",
                          text=f"answer {turn} " + "a" * 3000))
        s.flush()
        history = load_history(s, conversation.id, exclude_job_id="none", max_turns=20,
                               token_budget=5000)
    assert 0 < len(history) < 24 and len(history) % 2 == 0
    assert sum(estimate_tokens(m["content"]) for m in history) <= 5000
    assert history[-1]["content"].startswith("answer 11"), "the newest turns are kept"


@pytest.mark.parametrize("path,field", [("/v1/jobs", "message"), ("/v1/batches", "questions")])
def test_deeply_nested_json_is_a_400_and_creates_nothing(client, auth, path, field):
    before = client.get("/v1/conversations", headers=auth).get_json()["items"]
    body = f'{{"{field}": {"[" * 1100}1{"]" * 1100}}}'
    resp = client.post(path, data=body, headers=auth, content_type="application/json")
    assert resp.status_code == 400, resp.get_data(as_text=True)
    assert resp.mimetype == "application/problem+json"
    assert "nested" in resp.get_json()["detail"]
    assert client.get("/v1/conversations", headers=auth).get_json()["items"] == before


@pytest.mark.parametrize("query", [
    {"to": "9999-12-31"},                                # the day after is past the calendar
    {"from": "0001-01-01T00:00:00+14:00"},               # in UTC it is year 0
    {"from": "0001-01-01", "to": "9999-12-31T23:59:59-14:00"},
    {"to": "0001-01-01T00:00:00+14:00"},
])
def test_dates_at_the_ends_of_the_calendar_are_answered(client, auth, query):
    resp = client.get("/v1/usage", query_string=query, headers=auth)
    assert resp.status_code == 200, resp.get_data(as_text=True)
    assert resp.get_json()["totals"]["llm_calls"] == 0


@pytest.mark.parametrize("body", [
    '{"message": "\\ud800 lone surrogate"}',     # valid JSON, but not Unicode text
    '{"message": "How many flights?", "conversation_id": NaN}',
])
def test_json_that_is_not_plain_unicode_json_is_a_400(client, auth, body):
    resp = client.post("/v1/jobs", data=body, headers=auth, content_type="application/json")
    assert resp.status_code == 400, resp.get_data(as_text=True)
    assert resp.get_json()["detail"].startswith("The request body is not valid JSON")
