"""How the CLI words a failed conversation with the API at ``--api``: one line, no
traceback, saying what answered and, where it can, what to check."""
from __future__ import annotations

import click
import httpx

from sunrise.client import ApiError, NotSunriseApi


def api_failure(exc: Exception, api_url: str) -> click.ClickException | None:
    """The ClickException to exit with for ``exc`` (None if it is no API failure):
    something that is not a Sunrise API answered, a Sunrise problem (a 401 says that
    this API does not know the key), or nothing answered at all."""
    if isinstance(exc, NotSunriseApi):
        return click.ClickException(str(exc))
    if isinstance(exc, ApiError):
        detail = exc.problem.get("detail") or exc.problem.get("title") or ""
        if exc.status == 401:
            detail += (f" (the Sunrise API at {api_url} does not accept this key: is it this "
                       "deployment's API, and the key one that `sunrise keys create` made "
                       "against its database?)")
        return click.ClickException(f"{exc.status}: {detail}")
    if isinstance(exc, httpx.HTTPError):
        return click.ClickException(f"the API at {api_url} did not answer: {exc}")
    return None
