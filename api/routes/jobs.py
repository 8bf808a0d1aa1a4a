"""/v1/jobs: submit, read (long-poll), subscribe (SSE), cancel."""
from __future__ import annotations

from flask import Blueprint, g

from api.auth import accepts_query_token, authenticate
from api.authz import check_owned, require
from api.idempotency import idempotency_key
from api.limits import costs_questions, limit_requests
from api.request_parsing import parse_body, parse_query
from api.resources import resources
from api.schemas.common import EventsQuery
from api.schemas.events import JOB_EVENTS
from api.schemas.jobs import JobAccepted, JobCreate, JobOut, JobQuery
from api.services import jobs as job_service
from api.spec import spec
from api.sse import events_response
from shared.models import Job

bp = Blueprint("jobs", __name__, url_prefix="/v1/jobs")
bp.before_request(authenticate)
bp.before_request(limit_requests)


@spec.doc("POST", "/v1/jobs", "Ask a question; the answer is computed asynchronously.",
          body=JobCreate, responses={202: JobAccepted, 409: None})
@bp.post("")
@costs_questions(1)
def create_job():
    principal = require(scope="ask")
    body = parse_body(JobCreate)
    key = idempotency_key()
    res = resources()
    view, _created = job_service.submit_job(res, g.tenant_id, body, key, principal)
    accepted = {k: view[k] for k in ("job_id", "conversation_id", "status", "links")}
    return accepted, 202, {"Location": view["links"]["self"]}


@spec.doc("GET", "/v1/jobs/{job_id}", "The job; ?wait=N long-polls until it ends.",
          query=JobQuery, responses={200: JobOut})
@bp.get("/<job_id>")
def get_job(job_id: str):
    query = parse_query(JobQuery)
    check_owned(Job, job_id, "job")
    return job_service.wait_for_job(resources(), g.tenant_id, job_id, query.wait)


@spec.doc("GET", "/v1/jobs/{job_id}/events",
          "Server-Sent Events of the job's progress, resumable with Last-Event-ID; "
          "204 when the client already has the terminal event.",
          query=EventsQuery, responses={200: JOB_EVENTS, 204: None})
@bp.get("/<job_id>/events")
@accepts_query_token
def job_events(job_id: str):
    check_owned(Job, job_id, "job")
    return events_response(
        lambda after: job_service.job_event_stream(resources(), g.tenant_id, job_id, after))


@spec.doc("POST", "/v1/jobs/{job_id}/cancel",
          "Cancel: a queued job at once, a running one at its next round boundary; "
          "409 once it has ended.",
          responses={202: JobOut, 409: None})
@bp.post("/<job_id>/cancel")
def cancel_job(job_id: str):
    check_owned(Job, job_id, "job")
    return job_service.cancel_job(resources(), g.tenant_id, job_id), 202
