"""Console sign-in with OpenID Connect: ``init_app`` wires the client and its routes."""
from __future__ import annotations

from flask import Flask

from shared.config import Settings


def init_app(app: Flask, settings: Settings) -> None:
    from api.signin import oidc_client, routes

    oidc_client.init_app(app, settings)
    app.register_blueprint(routes.bp)
