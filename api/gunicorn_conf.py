"""gunicorn settings for the API.

gevent workers: an SSE subscriber or a long-poller is a greenlet blocked on Redis,
not an OS thread, so one process holds thousands of open streams.
"""
worker_class = "gevent"
worker_connections = 2000
timeout = 60
graceful_timeout = 30
keepalive = 5
accesslog = None
