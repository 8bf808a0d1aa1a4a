"""/v1/batches: submit a set of questions, follow them, fetch the report."""
from __future__ import annotations

from flask import Blueprint, Response, g

from api.auth import accepts_query_token, authenticate
from api.authz import owned_view_arg, require
from api.idempotency import idempotency_key
from api.limits import limit_requests
from api.request_parsing import parse_body, parse_query
from api.resources import resources
from api.schemas.batches import BatchAccepted, BatchCreate, BatchOut, BatchQuery, ReportQuery
from api.schemas.common import EventsQuery
from api.schemas.events import BATCH_EVENTS
from api.services import batches as batch_service
from api.spec import spec
from api.sse import events_response
from shared.models import Batch
from shared.reports import FORMATS, render

bp = Blueprint("batches", __name__, url_prefix="/v1/batches")
bp.before_request(authenticate)
bp.before_request(limit_requests)
bp.before_request(owned_view_arg(Batch, "batch_id", "batch"))

# Model-written text is escaped in the report; this forbids scripts and fetches anyway.
REPORT_CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
              "frame-ancestors 'none'; base-uri 'none'; form-action 'none'")


@spec.doc("POST", "/v1/batches", "Submit 1 to 500 questions; a report is assembled when all end.",
          body=BatchCreate, responses={202: BatchAccepted, 409: None}, tag="batches")
@bp.post("")
def create_batch():
    principal = require(role="analyst", scope="ask")
    body = parse_body(BatchCreate)
    key = idempotency_key()
    res = resources()
    accepted, _created = batch_service.submit_batch(res, g.tenant_id, body, key, principal)
    return accepted, 202, {"Location": accepted["links"]["self"]}


@spec.doc("GET", "/v1/batches/{batch_id}", "Counts per job status, progress, ETA and usage.",
          query=BatchQuery, responses={200: BatchOut}, tag="batches")
@bp.get("/<batch_id>")
def get_batch(batch_id: str):
    parse_query(BatchQuery)
    return batch_service.get_batch(resources(), g.tenant_id, batch_id)


@spec.doc("GET", "/v1/batches/{batch_id}/events",
          "Server-Sent Events: queued, one progress per finished question, then completed.",
          query=EventsQuery, responses={200: BATCH_EVENTS, 204: None},
          tag="batches")
@bp.get("/<batch_id>/events")
@accepts_query_token
def batch_events(batch_id: str):
    return events_response(
        lambda after: batch_service.batch_event_stream(resources(), g.tenant_id, batch_id, after))


@spec.doc("GET", "/v1/batches/{batch_id}/report",
          "The report: one self-contained HTML file, Markdown, JSON, or CSV of the charts' rows; "
          "409 while the batch runs.",
          query=ReportQuery, responses={
              200: ("the report", *(f.content_type for f in FORMATS.values())), 409: None},
          tag="batches")
@bp.get("/<batch_id>/report")
@accepts_query_token
def batch_report(batch_id: str):
    query = parse_query(ReportQuery)
    document = batch_service.load_report(resources(), g.tenant_id, batch_id)
    single = query.format == "csv" and query.question is not None and query.chart is not None
    body = render(document, query.format, question=query.question if single else None,
                  chart=query.chart if single else None)
    name = f"sunrise-batch-{batch_id[:8]}"
    if single:
        name += f"-q{query.question}-c{query.chart}"
    disposition = "attachment" if query.download or query.format == "csv" else "inline"
    headers = {"Content-Disposition": f'{disposition}; filename="{name}.{query.format}"',
               "Cache-Control": "private, max-age=300", "X-Content-Type-Options": "nosniff",
               "Referrer-Policy": "no-referrer"}
    if query.format == "html":
        headers["Content-Security-Policy"] = REPORT_CSP
    return Response(body, content_type=FORMATS[query.format].media_type, headers=headers)
