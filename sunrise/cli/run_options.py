"""The options of the commands that run a batch of questions (``report``, ``eval``):
where it runs -- in this process (``--local``, ``--offline``) or through an API
(``--api``, ``--key``: ``sunrise/cli/api_options.py``) -- and how long to wait for it."""
from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import click

from sunrise.cli.api_options import API_OPTIONS

F = TypeVar("F", bound=Callable)

RUN_OPTIONS = (
    click.option("--local", is_flag=True,
                 help="Answer in this process instead of through the API."),
    click.option("--offline", is_flag=True, help="With --local: answer with Sunrise's offline "
                 "model (a test double, not Claude), started here."),
    *API_OPTIONS,
    click.option("--timeout", default=6 * 3600.0, show_default=True,
                 help="Give up after seconds."),
)


def run_options(command: F) -> F:
    """Add the options above to ``command`` (parameters ``local``, ``offline``,
    ``api_url``, ``api_key``, ``timeout``)."""
    for option in reversed(RUN_OPTIONS):
        command = option(command)
    return command
