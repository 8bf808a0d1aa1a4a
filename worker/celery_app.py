"""Entry point for ``celery -A worker.celery_app``: the app is built on first access.

Module ``__getattr__`` keeps importing this module free of side effects; Celery's
app finder asks for ``app`` and gets the configured instance.
"""
from __future__ import annotations

import functools

from celery import Celery

from shared.celery_factory import make_celery
from shared.config import get_settings
from worker.datasets.import_process import install_import_shutdown
from worker.jobs.live_engines import install_live_shutdown
from worker.observability import install_observability


@functools.cache
def create_app() -> Celery:
    """The worker's app: the environment's settings, the tasks, logging and metrics,
    and what its shutdown stops (imports) and closes (live engines)."""
    import worker.tasks  # noqa: F401 -- its module-level tasks join every app

    app = make_celery(get_settings())
    install_observability(app)
    install_import_shutdown(app)
    install_live_shutdown(app)
    return app


def __getattr__(name: str):
    if name == "app":
        return create_app()
    raise AttributeError(name)
