"""/v1/schedules: reports that arrive by themselves (docs/schedules.md)."""
from __future__ import annotations

from flask import Blueprint

from api.acting import current_principal
from api.audit_trail import note
from api.auth import authenticate
from api.authz import require
from api.limits import limit_requests
from api.request_parsing import parse_body, parse_query
from api.resources import resources
from api.schemas.schedules import (
    RunList,
    RunOut,
    RunsQuery,
    ScheduleCreate,
    ScheduleCreated,
    ScheduleList,
    ScheduleOut,
    ScheduleUpdate,
)
from api.services import schedules as service
from api.spec import spec

bp = Blueprint("schedules", __name__, url_prefix="/v1/schedules")
bp.before_request(authenticate)
bp.before_request(limit_requests)


@spec.doc("POST", "/v1/schedules", "Save a schedule: questions asked on a cron, delivered.",
          body=ScheduleCreate, responses={201: ScheduleCreated}, tag="schedules")
@bp.post("")
def create_schedule():
    principal = require(role="analyst", scope="ask")
    created = service.create_schedule(resources(), principal, parse_body(ScheduleCreate))
    note("schedule.create", created["schedule_id"])
    return created, 201, {"Location": created["links"]["self"]}


@spec.doc("GET", "/v1/schedules", "Your schedules (an admin sees the tenant's).",
          responses={200: ScheduleList}, tag="schedules")
@bp.get("")
def list_schedules():
    return service.list_schedules(resources(), current_principal())


@spec.doc("GET", "/v1/schedules/{schedule_id}", "A schedule, its next run and last runs.",
          responses={200: ScheduleOut}, tag="schedules")
@bp.get("/<schedule_id>")
def get_schedule(schedule_id: str):
    return service.get_schedule(resources(), current_principal(), schedule_id)


@spec.doc("PATCH", "/v1/schedules/{schedule_id}", "Change a schedule; pause or resume it.",
          body=ScheduleUpdate, responses={200: ScheduleOut}, tag="schedules")
@bp.patch("/<schedule_id>")
def update_schedule(schedule_id: str):
    body = parse_body(ScheduleUpdate)
    updated = service.update_schedule(resources(), require(scope="ask"), schedule_id, body)
    note("schedule.update", schedule_id, {"fields": sorted(body.model_fields_set)})
    return updated


@spec.doc("DELETE", "/v1/schedules/{schedule_id}", "Delete a schedule and its runs.",
          responses={204: None}, tag="schedules")
@bp.delete("/<schedule_id>")
def delete_schedule(schedule_id: str):
    service.delete_schedule(resources(), require(scope="ask"), schedule_id)
    note("schedule.delete", schedule_id)
    return "", 204


@spec.doc("POST", "/v1/schedules/{schedule_id}/run", "Run the schedule now, once.",
          responses={202: RunOut}, tag="schedules")
@bp.post("/<schedule_id>/run")
def run_now(schedule_id: str):
    return service.run_now(resources(), require(scope="ask"), schedule_id), 202


@spec.doc("GET", "/v1/schedules/{schedule_id}/runs", "The schedule's runs, newest first.",
          query=RunsQuery, responses={200: RunList}, tag="schedules")
@bp.get("/<schedule_id>/runs")
def list_runs(schedule_id: str):
    query = parse_query(RunsQuery)
    return service.list_runs(resources(), current_principal(), schedule_id, query.limit)
