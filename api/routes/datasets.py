"""/v1/datasets: bring data (files or a live database), describe, annotate, refresh,
delete, follow an import (SSE)."""
from __future__ import annotations

from pathlib import Path

from flask import Blueprint, Response, g, request

from api.acting import current_principal
from api.audit_trail import note
from api.auth import accepts_query_token, authenticate
from api.authz import actor, require
from api.idempotency import idempotency_key
from api.limits import limit_requests
from api.request_parsing import parse_body, parse_query
from api.resources import resources
from api.schemas.common import EventsQuery
from api.schemas.dataset_sql import SqlResult, SqlRun
from api.schemas.datasets import (
    DatasetAccepted,
    DatasetCreate,
    DatasetList,
    DatasetListQuery,
    DatasetOut,
    DatasetPatch,
    DatasetUpload,
)
from api.schemas.events import DATASET_EVENTS
from api.services import datasets as dataset_service
from api.services.dataset_sql import run_dataset_sql
from api.spec import spec
from api.sse import events_response
from api.uploads import parse_form, spool_uploads_to

bp = Blueprint("datasets", __name__, url_prefix="/v1/datasets")
bp.before_request(authenticate)
bp.before_request(limit_requests)


@bp.before_request
def _usable_dataset() -> None:
    # A dataset not shared with a viewer or analyst is a 404 to them, as another
    # tenant's is; admins and owners see every dataset of the tenant.
    dataset_id = (request.view_args or {}).get("dataset_id")
    if dataset_id is not None:
        dataset_service.check_usable(resources(), current_principal(), dataset_id)


def _accepted(accepted: dict):
    return accepted, 202, {"Location": accepted["links"]["self"]}


@spec.doc("POST", "/v1/datasets", "Create a dataset from uploaded files (multipart/form-data: "
          "name, file...) or a PostgreSQL/MariaDB database (JSON): copied (source.mode "
          "snapshot, the default) or queried where it lives (live: introspected, no copy; a "
          "role that can write is a 422 writable_role unless allow_writable_role). It "
          "imports on a worker, follow it at links.events. A retry with the same Idempotency-Key and "
          "the same request gets the first answer; with another request, 409.", body=DatasetCreate,
          other_bodies={"multipart/form-data": DatasetUpload},
          responses={202: DatasetAccepted, 409: None, 413: None, 415: None}, tag="datasets")
@bp.post("")
def create_dataset():
    require(role="analyst", scope="datasets")
    res = resources()
    key = idempotency_key()
    if request.mimetype == "multipart/form-data":
        spool_uploads_to(Path(res.settings.data_dir) / "uploads",
                         res.settings.max_upload_mb * 2**20, hashed=key is not None)
        form, files = parse_form(res.settings.max_upload_mb)
        dataset_service.reject_unknown_fields(form, files)
        name = dataset_service.require_form_name(form)
        accepted = dataset_service.create_from_files(res, g.tenant_id, name,
                                                     files.getlist("file"), key)
    else:
        body = parse_body(DatasetCreate)
        accepted = dataset_service.create_from_database(res, g.tenant_id, body, key)
    note("dataset.create", accepted.get("dataset_id"))
    return _accepted(accepted)


@spec.doc("GET", "/v1/datasets", "Your datasets, newest first, with their tables (cursor "
          "pagination; 100 a page unless ?limit= says fewer), and your quota use.", query=DatasetListQuery,
          responses={200: DatasetList}, tag="datasets")
@bp.get("")
def list_datasets():
    query = parse_query(DatasetListQuery)
    return dataset_service.list_datasets(resources(), g.tenant_id, limit=query.limit,
                                         cursor=query.cursor, principal=current_principal())


@spec.doc("GET", "/v1/datasets/{dataset_id}", "The dataset: status, version, error, and "
          "its tables' schema, profile and descriptions.", responses={200: DatasetOut},
          tag="datasets")
@bp.get("/<dataset_id>")
def get_dataset(dataset_id: str):
    return dataset_service.get_dataset(resources(), g.tenant_id, dataset_id)


@spec.doc("PATCH", "/v1/datasets/{dataset_id}", "Annotate (descriptions, glossary, examples "
          "whose SQL is run to check it), make it your default dataset, set its refresh "
          "schedule (refresh: {cron, timezone}, at most every 5 minutes; null: none), or "
          "correct how it was read: re-type a column (every value checked first; 422 naming "
          "the row and value that does not convert) or set a CSV's or sheet's header row and "
          "footer. A correction imports the next version (202, status importing; the current "
          "version serves until it is ready) and every refresh keeps it.", body=DatasetPatch,
          responses={200: DatasetOut, 202: DatasetOut, 409: None, 413: None},
          tag="datasets")
@bp.patch("/<dataset_id>")
def patch_dataset(dataset_id: str):
    principal = require(role="admin", scope="datasets")
    body = parse_body(DatasetPatch)
    view, reimporting = dataset_service.patch_dataset(resources(), g.tenant_id, dataset_id,
                                                      body)
    if "access" in body.model_fields_set:
        view["access"] = dataset_service.set_access(
            resources(), g.tenant_id, dataset_id,
            body.access.model_dump() if body.access else None, actor(), principal.user_id)
    changed = sorted(body.model_fields_set - {"access"})
    if changed:
        details = {"fields": changed}
        for rules in ("policies", "masks"):  # what a user may see: recorded as set
            if rules in body.model_fields_set:
                details[rules] = [r.model_dump() for r in getattr(body, rules) or []]
        note("dataset.update", dataset_id, details)
    return (view, 202, {"Location": view["links"]["self"]}) if reimporting else view


@spec.doc("POST", "/v1/datasets/{dataset_id}/refresh", "Re-import the same sources (a live "
          "dataset: introspect the source again) as a new version; the current one serves "
          "until it is ready.",
          responses={202: DatasetAccepted, 409: None, 413: None}, tag="datasets")
@bp.post("/<dataset_id>/refresh")
def refresh_dataset(dataset_id: str):
    require(role="admin", scope="datasets")
    accepted = dataset_service.refresh_dataset(resources(), g.tenant_id, dataset_id)
    note("dataset.update", dataset_id, {"refresh": True})
    return _accepted(accepted)


@spec.doc("POST", "/v1/datasets/{dataset_id}/sql", "Run one read-only SELECT on the "
          "dataset's current version (a live dataset: on its source), guarded and bounded as the "
          "model's SQL tool is, and get its result text (needs the datasets scope); 503 when "
          "a live source cannot be reached.", body=SqlRun,
          responses={200: SqlResult, 403: None, 409: None, 422: None, 503: None},
          tag="datasets")
@bp.post("/<dataset_id>/sql")
def run_sql(dataset_id: str):
    body = parse_body(SqlRun)
    return run_dataset_sql(resources(), current_principal(), dataset_id, body.sql)


@spec.doc("DELETE", "/v1/datasets/{dataset_id}", "Delete the dataset (its files go once no "
          "job uses them).", responses={204: None}, tag="datasets")
@bp.delete("/<dataset_id>")
def delete_dataset(dataset_id: str):
    require(role="admin", scope="datasets")
    dataset_service.delete_dataset(resources(), g.tenant_id, dataset_id)
    note("dataset.delete", dataset_id)
    return Response(status=204)


@spec.doc("GET", "/v1/datasets/{dataset_id}/events", "Server-Sent Events of the latest "
          "import: progress table by table, then ready or failed; 204 when the client "
          "already has the end.", query=EventsQuery, responses={200: DATASET_EVENTS, 204: None},
          tag="datasets")
@bp.get("/<dataset_id>/events")
@accepts_query_token
def dataset_events(dataset_id: str):
    return events_response(lambda after: dataset_service.dataset_event_stream(
        resources(), g.tenant_id, dataset_id, after))
