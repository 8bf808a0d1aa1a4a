"""What a dataset is imported from: files on disk, or a live database given by URL.

A database URL carries credentials. ``DatabaseSource`` never shows them: its repr,
``display`` and ``as_dict`` use the URL with the password (and any password-like
query parameter) masked, and ``scrub`` removes the secrets from driver messages
before they reach an error or a log line.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from shared.errors import UnsupportedSource

MASK = "***"
# Query parameters that carry secrets in common drivers' URLs (password=, sslpassword=,
# api_key=, token=...).
_SECRET_PARAM = re.compile(r"pass|secret|token|key", re.IGNORECASE)


@dataclass(frozen=True)
class FileSource:
    """A file to import. ``name`` is what the user called it (the uploaded file name),
    used for the table name and in messages; it defaults to the file's own name."""

    path: Path
    name: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", Path(self.path))
        if not self.name:
            object.__setattr__(self, "name", self.path.name)

    @property
    def display(self) -> str:
        return self.name

    def as_dict(self) -> dict:
        return {"file": self.name}


@dataclass(frozen=True)
class DatabaseSource:
    """A live PostgreSQL or MariaDB/MySQL database to snapshot, as a SQLAlchemy URL.

    ``tables`` names ``schema.table`` or ``table`` (in the URL's default schema); None
    means every table of the default schema. Raises ``UnsupportedSource`` if ``url``
    is not a SQLAlchemy URL (without echoing it: it may hold a password).
    """

    url: str = field(repr=False)
    tables: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.tables is not None:
            object.__setattr__(self, "tables", tuple(self.tables))
        self.parsed()  # fail early on garbage

    def parsed(self) -> URL:
        try:
            return make_url(self.url)
        except (ArgumentError, ValueError):  # ValueError: a port that is not a number
            raise UnsupportedSource(
                "The source URL is not a SQLAlchemy database URL "
                "(expected e.g. postgresql://user:password@host:5432/dbname).",
                source="url") from None

    @property
    def display(self) -> str:
        return mask_url(self.parsed())

    def secrets(self) -> list[str]:
        """The secret strings in the URL, raw and percent-encoded, longest first."""
        url = self.parsed()
        found = [url.password] if url.password else []
        found += [value for name, value in _query_items(url) if _SECRET_PARAM.search(name)]
        found += [quote(str(s), safe="") for s in found]
        return sorted({str(s) for s in found if s}, key=len, reverse=True)

    def scrub(self, text: str) -> str:
        """``text`` with every secret of the URL replaced by ``***``."""
        for secret in self.secrets():
            text = text.replace(secret, MASK)
        return text

    def as_dict(self) -> dict:
        return {"url": self.display, "tables": list(self.tables) if self.tables else None}

    def __repr__(self) -> str:
        return f"DatabaseSource(url={self.display!r}, tables={self.tables!r})"


Source = FileSource | DatabaseSource


def mask_url(url: URL) -> str:
    """The URL as text with its password and password-like query values shown as ***."""
    masked = {name: (MASK if _SECRET_PARAM.search(name) else value)
              for name, value in url.query.items()}
    return url.set(query=masked).render_as_string(hide_password=True)


def _query_items(url: URL) -> list[tuple[str, str]]:
    items = []
    for name, value in url.query.items():
        values = value if isinstance(value, tuple) else (value,)
        items += [(name, str(v)) for v in values]
    return items
