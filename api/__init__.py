"""The Flask application factory."""
from __future__ import annotations

from typing import Any

from flask import Flask

from shared.config import Settings, get_settings


def create_app(overrides: dict[str, Any] | None = None, *, settings: Settings | None = None) -> Flask:
    """Build the API. ``overrides`` are Settings fields that win over the environment."""
    from api import console, problems, resources, signin, uploads
    from api.mcp import endpoint as mcp
    from api.routes import (
        audit,
        batches,
        conversations,
        datasets,
        health,
        jobs,
        keys,
        metrics,
        schedules,
        sign_in,
        tenant,
        trust,
        usage,
        users,
    )
    from api.spec import spec
    from shared import tracing

    if settings is None:
        settings = Settings(**overrides) if overrides else get_settings()
    app = Flask(__name__)
    tracing.init_app(app, settings)
    app.config["MAX_CONTENT_LENGTH"] = settings.max_body_bytes
    app.json.sort_keys = False
    resources.init_app(app, settings)
    problems.init_app(app)
    uploads.init_app(app)
    for module in (health, jobs, conversations, batches, datasets, usage, keys, users, sign_in,
                   audit, schedules, trust, tenant, console):
        app.register_blueprint(module.bp)
    signin.init_app(app, settings)
    metrics.init_app(app)
    mcp.init_app(app)
    app.register_blueprint(spec.blueprint())
    return app

