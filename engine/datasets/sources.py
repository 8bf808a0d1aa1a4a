"""What a dataset is imported from: files on disk, or a live database given by URL.

A database URL carries credentials. ``DatabaseSource`` never shows them: its repr,
``display`` and ``as_dict`` use the URL with the password field (and any
password-like query parameter) masked. It carries the outbound policy its connection
must obey (``shared/outbound.py``); ``check`` applies it without connecting.
A Spark Connect URL (``sc://host:port/;token=...``, live only) is not a SQLAlchemy one:
no importer claims it and only ``engine.live`` connects to it; its ``display`` masks
the secret-like parameters Connect URLs carry after ``/;``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from shared.errors import UnsupportedSource
from shared.outbound import OutboundPolicy

if TYPE_CHECKING:
    from engine.datasets.importers.live_connection import Endpoint

MASK = "***"
# Query parameters that carry secrets in common drivers' URLs (password=, sslpassword=,
# api_key=, token=...).
_SECRET_PARAM = re.compile(r"pass|secret|token|key", re.IGNORECASE)
SPARK_CONNECT_SCHEME = "sc://"


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
    means every table of the default schema. ``outbound`` is the policy the
    connection obeys (a source without one cannot connect). Raises
    ``UnsupportedSource`` if ``url`` is not a SQLAlchemy URL (without echoing it: it may
    hold a password).
    """

    url: str = field(repr=False)
    tables: tuple[str, ...] | None = None
    outbound: OutboundPolicy | None = field(default=None, repr=False, compare=False)

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
    def spark_connect(self) -> bool:
        """Whether this is a Spark Connect source (live only; ``engine.live`` opens it)."""
        return self.url.startswith(SPARK_CONNECT_SCHEME)

    @property
    def display(self) -> str:
        return mask_spark_url(self.url) if self.spark_connect else mask_url(self.parsed())

    def endpoint(self) -> Endpoint:
        """Host, port, user, password, database and TLS settings: all a connection is
        built from. Raises SourceRefused naming a refused part of the URL."""
        from engine.datasets.importers.live_connection import parse_endpoint

        return parse_endpoint(self.parsed(), self.display)

    def schemas(self) -> tuple[str, ...]:
        """The schemas ``tables`` names besides the URL's default one."""
        return tuple(dict.fromkeys(t.rpartition(".")[0] for t in self.tables or ()
                                   if "." in t))

    def check(self) -> None:
        """Everything refusable without connecting: the URL's parts, then the outbound
        policy on the resolved addresses. Raises SourceRefused naming why."""
        from engine.datasets.importers.live_connection import check_destination

        if self.outbound is None:
            raise ValueError("a DatabaseSource needs an outbound policy to be checked")
        endpoint = self.endpoint()
        check_destination(endpoint, self.outbound, self.display,
                          self.schemas() if endpoint.backend == "mysql" else ())

    def as_dict(self) -> dict:
        return {"url": self.display, "tables": list(self.tables) if self.tables else None}

    def __repr__(self) -> str:
        return f"DatabaseSource(url={self.display!r}, tables={self.tables!r})"


Source = FileSource | DatabaseSource


def source_database(source: DatabaseSource) -> str:
    """The database the URL names ("" for none, and for Spark Connect, whose URL names
    none)."""
    return "" if source.spark_connect else source.parsed().database or ""


def mask_spark_url(url: str) -> str:
    """A Spark Connect URL with its parameters' values that could be secrets (token,
    password...) shown as ***."""
    head, sep, params = url.partition("/;")
    shown = []
    for param in params.split(";") if sep else []:
        key, eq, value = param.partition("=")
        shown.append(f"{key}{eq}{MASK if _SECRET_PARAM.search(key) and eq else value}")
    return head + (sep + ";".join(shown) if sep else "")


def mask_url(url: URL) -> str:
    """The URL as text with its password and password-like query values shown as ***."""
    masked = {name: (MASK if _SECRET_PARAM.search(name) else value)
              for name, value in url.query.items()}
    return url.set(query=masked).render_as_string(hide_password=True)

