"""Where a sign-in may send the browser back to: a path of this site, nothing else."""
from __future__ import annotations

from urllib.parse import urlsplit

from shared.errors import BadRequest

MAX_LENGTH = 1000


def checked_return_to(value: str | None) -> str:
    """``value`` if it is a same-origin relative path (``/…``), ``/`` when absent.

    Raises BadRequest for anything a browser could resolve to another origin: an
    absolute URL, a scheme-relative ``//host``, a backslash (``/\\host`` is ``//host``
    to browsers), control characters or whitespace.
    """
    if value is None or value == "":
        return "/"
    parts = urlsplit(value)
    if (len(value) > MAX_LENGTH or not value.startswith("/") or value.startswith("//")
            or "\\" in value or parts.scheme or parts.netloc
            or any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7f for ch in value)):
        raise BadRequest("return_to must be a path on this site starting with a single '/' "
                         "(such as /?conversation=…), not an address elsewhere.")
    return value
