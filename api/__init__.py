"""The Flask application factory."""
from __future__ import annotations

from typing import Any

from flask import Flask

from shared.config import Settings, get_settings


def create_app(overrides: dict[str, Any] | None = None, *, settings: Settings | None = None) -> Flask:
    """Build the API. ``overrides`` are Settings fields that win over the environment."""
    from api import context, problems
    from api.routes import conversations, health, jobs
    from api.spec import spec

    if settings is None:
        settings = Settings(**overrides) if overrides else get_settings()
    app = Flask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = settings.max_body_bytes
    app.json.sort_keys = False
    context.init_app(app, settings)
    problems.init_app(app)
    for module in (health, jobs, conversations):
        app.register_blueprint(module.bp)
    app.register_blueprint(spec.blueprint())
    _optional_blueprints(app)
    return app


def _optional_blueprints(app: Flask) -> None:
    # Features built in their own modules plug in here when present.
    import importlib

    for name in ("api.routes.batches", "api.routes.usage", "api.routes.metrics", "api.console"):
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        module.init_app(app) if hasattr(module, "init_app") else app.register_blueprint(module.bp)
