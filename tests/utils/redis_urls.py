"""Redis URLs for tests of how clients connect."""
from __future__ import annotations

from urllib.parse import urlencode


def tls_url(redis_url: str, port: int | None = None, **query: str) -> str:
    """``redis_url`` (a redis://127.0.0.1:6379/<db> test URL) as rediss://, on ``port``
    if given, with ``query`` appended."""
    url = redis_url.replace("redis://", "rediss://", 1)
    if port is not None:
        url = url.replace(":6379/", f":{port}/", 1)
    return f"{url}?{urlencode(query)}" if query else url
