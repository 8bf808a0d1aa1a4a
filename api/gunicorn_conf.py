"""gunicorn settings for the API (``gunicorn --config python:api.gunicorn_conf``), used
by ``sunrise api`` and so by the Procfile and docker-compose.yml.

Why gevent workers: an SSE subscriber or a long-poller spends minutes waiting, not
computing. Under gevent (sockets, locks and queues monkey-patched before the app
loads) each open request is a greenlet parked on a queue of the process's event hub
(api/event_hub.py), which reads Redis for all of them through ONE connection; it holds
no OS thread and no database connection while it waits. One process therefore holds
thousands of open streams, where gthread would need a thread per stream.

- ``worker_connections``: open requests (streams included) per worker process; past
  it, new connections wait in the listen backlog.
- ``timeout``: a gevent worker's liveness is reported by its own greenlet, so long
  streams never trip it; it only catches a worker blocked outside gevent.
- ``graceful_timeout``: on SIGTERM (a deploy), streams still open after this are cut;
  EventSource reconnects with Last-Event-ID and loses nothing.
- ``keepalive``: idle keep-alive seconds between requests of one client.
- Scale with ``--workers`` (``sunrise api --workers N``): about one per core.
- ``post_worker_init``: gunicorn's own error answers (414, 431, 400) as problem+json;
  the loaded app's objects frozen out of garbage collection (shared/startup_heap.py).
"""
worker_class = "gevent"
worker_connections = 2000
timeout = 60
graceful_timeout = 30
keepalive = 5
backlog = 2048
accesslog = None
# Nothing here uses gunicornc; a control socket under $HOME would also collide between
# several API processes on one host.
control_socket_disable = True


def post_worker_init(worker) -> None:
    from api.server_errors import install
    from shared.startup_heap import freeze_startup_objects

    install()
    freeze_startup_objects()
