"""What makes a Celery worker process observable: its own metrics port, and its logs
in Sunrise's format (JSON with job_id, tenant and round when SUNRISE_LOG_FORMAT=json)
whether it was started by ``sunrise worker`` or by ``celery -A worker.celery_app worker``.

Why a metrics port per worker rather than prometheus-client's multiprocess directory:
workers run on many hosts and containers that share no filesystem, and a worker is
one process (the ``threads`` pool), so its registry already holds everything it did.
Prometheus scrapes every worker like any other target.

Several workers on one host each take the first free port from
``worker_metrics_port`` upwards (``PORT_SPAN`` ports); the chosen one is logged.
``worker_metrics_port = 0`` turns the server off.
"""
from __future__ import annotations

import errno
import gc
import importlib
import logging
from wsgiref.simple_server import WSGIServer

from celery import Celery, signals
from prometheus_client import REGISTRY, CollectorRegistry, start_http_server

from shared import tracing
from shared.celery_factory import settings_of
from shared.logging_setup import configure_logging
from shared.startup_heap import freeze_startup_objects
from worker.llm.client import MISSING_KEY_HELP

logger = logging.getLogger(__name__)

PORT_SPAN = 16
# What worker/tasks.py's runners import when the first task builds them.
TASK_MODULES = ("worker.jobs.runner", "worker.batches.coordinator", "worker.datasets.import_run",
                "worker.batches.message_batches", "worker.jobs.reaper")


class MetricsServer:
    """A running metrics endpoint; ``stop()`` closes it (idempotent)."""

    def __init__(self, server: WSGIServer, host: str, port: int):
        self._server = server
        self.host = host
        self.port = port
        self.url = f"http://{host}:{port}/metrics"

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


def start_metrics_server(host: str, port: int, *, registry: CollectorRegistry = REGISTRY,
                         span: int = PORT_SPAN) -> MetricsServer:
    """Serve ``registry`` at ``http://host:port/metrics`` on a daemon thread.

    Tries ``port`` .. ``port + span - 1`` and takes the first free one (``port=0``
    lets the OS choose). Raises ``OSError`` when none is free.
    """
    last: OSError | None = None
    for candidate in ([0] if port == 0 else range(port, port + span)):
        try:
            server, _thread = start_http_server(candidate, addr=host, registry=registry)
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                raise
            last = exc
            continue
        bound = server.server_address[1]
        logger.info("worker metrics at http://%s:%s/metrics", host, bound)
        return MetricsServer(server, host, bound)
    raise OSError(errno.EADDRINUSE, f"no free metrics port in {port}..{port + span - 1}") from last


def import_task_modules() -> None:
    """Import what the tasks' runners are built from (``worker/tasks.py`` builds them on
    a worker's first task) before the start-up objects are frozen: SQLAlchemy, PyMySQL,
    DuckDB's client side, the job loop -- ≈ 500 modules whose functions and classes a
    full collection would otherwise walk for the life of the process."""
    for module in TASK_MODULES:
        importlib.import_module(module)


def install_observability(app: Celery) -> None:
    """Connect the Celery signals: logging setup, traces (when configured) before the
    first task, metrics server on ready, stop (and the last spans exported) at shutdown.

    Celery leaves logging to us once a ``setup_logging`` receiver exists; ``--loglevel``
    still sets the level. A metrics port that cannot be bound is logged and the worker
    runs on without metrics.
    """
    state: dict[str, MetricsServer] = {}

    def on_setup_logging(loglevel=None, **_kw) -> None:
        level = logging.getLevelName(loglevel) if isinstance(loglevel, int) else loglevel
        configure_logging(level or "INFO", settings_of(app).log_format)

    def on_init(sender=None, **_kw) -> None:
        if getattr(sender, "app", None) is app and tracing.configure(settings_of(app),
                                                                     "sunrise-worker"):
            tracing.instrument_celery_worker()

    def on_ready(sender=None, **_kw) -> None:
        if getattr(sender, "app", None) is not app or "server" in state:
            return  # another app's worker in this process (tests), or already serving
        import_task_modules()
        freeze_startup_objects()
        settings = settings_of(app)
        gc.set_threshold(settings.worker_gc_young_threshold, *gc.get_threshold()[1:])
        if settings.llm_target == "missing":
            # `sunrise worker` refuses to start; a worker started by `celery` says it
            # loudly, and its jobs fail at once with llm_auth rather than retrying.
            logger.error("%s", MISSING_KEY_HELP)
        if not settings.worker_metrics_port:
            return
        try:
            state["server"] = start_metrics_server(settings.worker_metrics_host,
                                                   settings.worker_metrics_port)
        except OSError as exc:
            logger.warning("worker metrics not served: %s", exc)

    def on_shutdown(**_kw) -> None:
        tracing.flush()
        server = state.pop("server", None)
        if server is not None:
            server.stop()

    uid = f"sunrise-{id(app)}"
    signals.setup_logging.connect(on_setup_logging, weak=False, dispatch_uid=f"{uid}-logging")
    signals.worker_init.connect(on_init, weak=False, dispatch_uid=f"{uid}-tracing")
    signals.worker_ready.connect(on_ready, weak=False, dispatch_uid=f"{uid}-metrics")
    signals.worker_shutdown.connect(on_shutdown, weak=False, dispatch_uid=f"{uid}-metrics-stop")
