"""Liveness and readiness."""
from __future__ import annotations

from flask import Blueprint
from sqlalchemy import text

from api.resources import resources
from api.schemas.common import Health
from api.spec import spec

bp = Blueprint("health", __name__)


@spec.doc("GET", "/healthz", "Liveness: the process answers.", responses={200: Health},
          auth=False, tag="operations")
@bp.get("/healthz")
def healthz():
    return {"status": "ok"}


@spec.doc("GET", "/readyz", "Readiness: the database and Redis answer.",
          responses={200: Health, 503: Health}, auth=False, tag="operations")
@bp.get("/readyz")
def readyz():
    res = resources()
    checks = {}
    try:
        with res.session() as s:
            s.execute(text("SELECT 1"))
        checks["database"] = "ok"
    except Exception as exc:
        checks["database"] = f"error: {type(exc).__name__}"
    try:
        res.redis.ping()
        checks["redis"] = "ok"
    except Exception as exc:
        checks["redis"] = f"error: {type(exc).__name__}"
    ready = all(v == "ok" for v in checks.values())
    return {"status": "ready" if ready else "unavailable", "checks": checks}, 200 if ready else 503
