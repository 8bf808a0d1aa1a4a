"""GET /metrics: Prometheus text format, no auth (keep it on the internal network).

The body is this process's registry (whatever it records; in-process workers, as in
tests and ``sunrise demo``, show their job and LLM counters here) followed by the
deployment-wide figures of ``api/fleet_metrics.py``. Workers running as their own
processes serve their counters on their own ports (``worker/observability.py``).
Not in /openapi.json: it is a scrape target, not part of the client API.
"""
from __future__ import annotations

from flask import Blueprint, Flask, Response, current_app
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest

from api.fleet_metrics import FleetCollector
from api.resources import resources

bp = Blueprint("metrics", __name__)


def init_app(app: Flask) -> None:
    """Register /metrics with a fleet collector bound to this app's services."""
    fleet = CollectorRegistry(auto_describe=False)
    with app.app_context():
        fleet.register(FleetCollector(resources()))
    app.extensions["sunrise_fleet_metrics"] = fleet
    app.register_blueprint(bp)


@bp.get("/metrics")
def metrics() -> Response:
    fleet = current_app.extensions["sunrise_fleet_metrics"]
    body = generate_latest(REGISTRY) + generate_latest(fleet)
    return Response(body, content_type=CONTENT_TYPE_LATEST, headers={"Cache-Control": "no-store"})
