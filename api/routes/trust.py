"""Feedback on answers and a dataset's verified queries (``docs/verified-queries.md``)."""
from __future__ import annotations

from flask import Blueprint

from api.acting import current_principal
from api.audit_trail import note
from api.auth import authenticate
from api.authz import check_owned, require
from api.limits import limit_requests
from api.request_parsing import parse_body, parse_query
from api.resources import resources
from api.schemas.trust import (
    FeedbackCreate,
    FeedbackList,
    FeedbackOut,
    FeedbackQuery,
    VerifiedQueryCreate,
    VerifiedQueryList,
    VerifiedQueryOut,
)
from api.services import feedback as feedback_service
from api.services import verified_queries as vq_service
from api.services.datasets import check_usable
from api.spec import spec
from shared.models import Job

bp = Blueprint("trust", __name__, url_prefix="/v1")
bp.before_request(authenticate)
bp.before_request(limit_requests)


@spec.doc("POST", "/v1/jobs/{job_id}/feedback", "Rate an answer up or down, with an "
          "optional comment; one rating per user and job, a second replaces the first.",
          body=FeedbackCreate, responses={201: FeedbackOut, 409: None}, tag="feedback")
@bp.post("/jobs/<job_id>/feedback")
def rate_job(job_id: str):
    check_owned(Job, job_id, "job")
    body = parse_body(FeedbackCreate)
    return feedback_service.rate_job(resources(), current_principal(), job_id, body.rating,
                                     body.comment), 201


@spec.doc("GET", "/v1/datasets/{dataset_id}/feedback", "Admins: the dataset's rated "
          "answers, newest first, with the question, the answer and the SQL it relied on.",
          query=FeedbackQuery, responses={200: FeedbackList, 403: None}, tag="feedback")
@bp.get("/datasets/<dataset_id>/feedback")
def list_feedback(dataset_id: str):
    principal = require(role="admin")
    query = parse_query(FeedbackQuery)
    return feedback_service.list_feedback(resources(), principal, dataset_id,
                                          query.rating, query.from_)


@spec.doc("POST", "/v1/datasets/{dataset_id}/verified-queries", "Admins: keep a question "
          "and the SQL that answers it; the SQL runs on the current version first (422 with "
          "the engine's error if it fails).", body=VerifiedQueryCreate,
          responses={201: VerifiedQueryOut, 403: None, 422: None}, tag="feedback")
@bp.post("/datasets/<dataset_id>/verified-queries")
def add_verified_query(dataset_id: str):
    principal = require(role="admin", scope="datasets")
    body = parse_body(VerifiedQueryCreate)
    created = vq_service.add_verified_query(resources(), principal, dataset_id, body.question,
                                            body.sql, body.from_job_id)
    note("verified_query.create", created["verified_query_id"], {"dataset_id": dataset_id})
    return created, 201


@spec.doc("GET", "/v1/datasets/{dataset_id}/verified-queries", "The dataset's verified "
          "queries.", responses={200: VerifiedQueryList}, tag="feedback")
@bp.get("/datasets/<dataset_id>/verified-queries")
def list_verified_queries(dataset_id: str):
    check_usable(resources(), current_principal(), dataset_id)
    return vq_service.list_verified_queries(resources(), current_principal(), dataset_id)


@spec.doc("DELETE", "/v1/datasets/{dataset_id}/verified-queries/{vq_id}", "Admins: forget "
          "a verified query.", responses={204: None, 403: None}, tag="feedback")
@bp.delete("/datasets/<dataset_id>/verified-queries/<vq_id>")
def delete_verified_query(dataset_id: str, vq_id: str):
    vq_service.delete_verified_query(resources(), require(role="admin", scope="datasets"),
                                     dataset_id, vq_id)
    note("verified_query.delete", vq_id, {"dataset_id": dataset_id})
    return "", 204
