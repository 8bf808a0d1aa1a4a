"""Which Sunrise API a command talks to, and with which key: ``--api`` and ``--key``, the
one definition every command that reaches the API over HTTP uses (``datasets``,
``report``, ``eval``).

Each option falls back on an environment variable, ``SUNRISE_API_URL`` and
``SUNRISE_API_KEY``; a flag given on the command line wins. These two are the CLI's own
(the server never reads them), so click reads them as it parses the command line, here
and nowhere else, instead of the settings object; ``docs/configuration.md`` lists them.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import click
from click.core import ParameterSource

F = TypeVar("F", bound=Callable)

API_URL_ENV, API_KEY_ENV = "SUNRISE_API_URL", "SUNRISE_API_KEY"
DEFAULT_API_URL = "http://127.0.0.1:8000"

API_OPTIONS = (
    click.option("--api", "api_url", envvar=API_URL_ENV, show_envvar=True,
                 default=DEFAULT_API_URL, show_default=True, help="The Sunrise API."),
    click.option("--key", "api_key", envvar=API_KEY_ENV, show_envvar=True, default=None,
                 help="API key (Bearer)."),
)


def api_options(command: F) -> F:
    """Add ``--api`` and ``--key`` to ``command`` (parameters ``api_url``, ``api_key``)."""
    for option in reversed(API_OPTIONS):
        command = option(command)
    return command


def key_from_environment() -> bool:
    """Whether the running command's ``--key`` came from ``SUNRISE_API_KEY`` rather than
    the command line (so that another explicit choice, such as ``--tenant``, wins)."""
    ctx = click.get_current_context(silent=True)
    return ctx is not None and ctx.get_parameter_source("api_key") is ParameterSource.ENVIRONMENT
