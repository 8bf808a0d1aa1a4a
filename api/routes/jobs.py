"""/v1/jobs: submit, read (long-poll), subscribe (SSE), cancel."""
from __future__ import annotations

from flask import Blueprint, Response, g, request

from api.auth import authenticate
from api.context import services
from api.limits import check_rate
from api.requests import parse_body, parse_query
from api.schemas import EventsQuery, JobAccepted, JobCreate, JobOut, JobQuery
from api.services import jobs as job_service
from api.spec import spec
from api.sse import event_stream
from shared.errors import BadRequest

bp = Blueprint("jobs", __name__, url_prefix="/v1/jobs")
bp.before_request(authenticate)

TERMINAL = ("succeeded", "failed", "cancelled")


@spec.doc("POST", "/v1/jobs", "Ask a question; the answer is computed asynchronously.",
          body=JobCreate, responses={202: JobAccepted, 409: None})
@bp.post("")
def create_job():
    body = parse_body(JobCreate)
    key = request.headers.get("Idempotency-Key")
    if key is not None and not (0 < len(key) <= 200):
        raise BadRequest("Idempotency-Key must be 1 to 200 characters.")
    svc = services()
    check_rate(svc, g.tenant_id)
    view, created = job_service.submit_job(svc, g.tenant_id, body, key)
    accepted = {k: view[k] for k in ("job_id", "conversation_id", "status", "links")}
    return accepted, 202, {"Location": view["links"]["self"]}


@spec.doc("GET", "/v1/jobs/{job_id}", "The job; ?wait=N long-polls until it ends.",
          query=JobQuery, responses={200: JobOut})
@bp.get("/<job_id>")
def get_job(job_id: str):
    query = parse_query(JobQuery)
    return job_service.wait_for_job(services(), g.tenant_id, job_id, query.wait)


@spec.doc("GET", "/v1/jobs/{job_id}/events", "Server-Sent Events of the job's progress.",
          query=EventsQuery, responses={200: "text/event-stream of job events"})
@bp.get("/<job_id>/events")
def job_events(job_id: str):
    query = parse_query(EventsQuery)
    svc = services()
    job_service.load_job(svc, g.tenant_id, job_id)  # 404 for unknown or foreign jobs
    tenant_id = g.tenant_id
    after = request.headers.get("Last-Event-ID") or query.last_event_id or "0-0"

    def terminal_from_db():
        view = job_service.load_job(svc, tenant_id, job_id)
        # The worker publishes right after its commit; only a crash in between (or an
        # expired stream) leaves the database ahead of the stream.
        if view["status"] in TERMINAL and not svc.events.has_terminal(job_id):
            return view["status"], view
        return None

    frames = event_stream(svc.events, job_id, after, heartbeat_s=svc.settings.sse_heartbeat_s,
                          max_s=svc.settings.job_deadline_s + 120,
                          terminal_from_db=terminal_from_db)
    return Response(frames, mimetype="text/event-stream", headers={
        "Cache-Control": "no-cache", "X-Accel-Buffering": "no", "Connection": "keep-alive"})


@spec.doc("POST", "/v1/jobs/{job_id}/cancel", "Cancel a queued or running job.",
          responses={202: JobOut, 409: None})
@bp.post("/<job_id>/cancel")
def cancel_job(job_id: str):
    return job_service.cancel_job(services(), g.tenant_id, job_id), 202
