"""Where the CLI's LLM calls go: Claude, a configured base URL, or the offline model.

"No key, no mystery": a command that needs the model and finds neither
``ANTHROPIC_API_KEY`` nor ``ANTHROPIC_BASE_URL`` stops at once and says how to go
on, instead of spending retries on connection errors. ``--offline`` starts the
offline model (``sunrise fake-llm``, a test double) in this process, as
``sunrise demo`` does, and points the settings at it.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator

import click
from rich.console import Console

from shared.config import Settings
from worker.llm.client import MISSING_KEY_HELP, OFFLINE_KEY

OFFLINE_EXTRA_HELP = (
    "The offline model needs the `offline` extra (starlette, uvicorn), which a production "
    "install leaves out: pip install 'sunrise[offline]' (`make install` includes it).")


def offline_server():
    """The offline model's server module (``sunrise.fake_llm.server``); raises
    ``click.UsageError`` saying what to install when its extra is missing."""
    try:
        from sunrise.fake_llm import server
    except ModuleNotFoundError as exc:
        if (exc.name or "").partition(".")[0] not in ("starlette", "uvicorn"):
            raise
        raise click.UsageError(OFFLINE_EXTRA_HELP) from exc
    return server


@contextlib.contextmanager
def offline_model() -> Iterator[str]:
    """Serve the offline model on a free 127.0.0.1 port until the block ends; yields its URL."""
    handle = offline_server().run_in_thread(port=0)
    try:
        yield handle.base_url
    finally:
        handle.stop()


@contextlib.contextmanager
def llm_settings(settings: Settings, *, offline: bool,
                 console: Console | None = None) -> Iterator[Settings]:
    """``settings`` ready for LLM calls.

    With ``offline``, they point at an in-process offline model for the block's
    duration (said on ``console``). Without it, raises ``click.UsageError`` carrying
    ``MISSING_KEY_HELP`` when neither a key nor a base URL is set.
    """
    if not offline:
        if settings.llm_target == "missing":
            raise click.UsageError(MISSING_KEY_HELP)
        yield settings
        return
    with offline_model() as base_url:
        (console or Console(stderr=True)).print(
            f"[yellow]offline: answering with Sunrise's offline model at {base_url} "
            "(a test double, not Claude)[/yellow]")
        yield settings.model_copy(update={"anthropic_base_url": base_url,
                                          "anthropic_api_key": OFFLINE_KEY})
