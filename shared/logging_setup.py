"""Logging: every line of a job carries job_id, tenant and round (JSON in production)."""
from __future__ import annotations

import contextlib
import contextvars
import logging
import sys
from collections.abc import Iterator

from pythonjsonlogger.json import JsonFormatter

_context: contextvars.ContextVar[dict] = contextvars.ContextVar("sunrise_log_context", default={})
CONTEXT_FIELDS = ("job_id", "tenant", "round")


@contextlib.contextmanager
def log_context(**fields) -> Iterator[None]:
    """Attach ``fields`` (job_id, tenant, round) to every record logged inside the block."""
    token = _context.set({**_context.get(), **fields})
    try:
        yield
    finally:
        _context.reset(token)


def set_log_field(name: str, value) -> None:
    """Update one field of the current context in place (e.g. the round number)."""
    _context.set({**_context.get(), name: value})


class ContextFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        ctx = _context.get()
        for name in CONTEXT_FIELDS:
            if not hasattr(record, name):
                setattr(record, name, ctx.get(name))
        return True


def configure_logging(level: str = "INFO", fmt: str | None = None) -> None:
    """Install one stderr handler on the root logger (idempotent). ``fmt`` is ``text`` or
    ``json``; None: the settings' ``log_format``, read when the first record is written
    (so that a command which only prints its help never reads the settings)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(ContextFilter())
    handler.setFormatter(_formatter(fmt) if fmt is not None else _SettingsFormatter())
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, "_sunrise", False)]:
        root.removeHandler(old)
    handler._sunrise = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(level.upper())


def _formatter(fmt: str) -> logging.Formatter:
    if fmt == "json":
        return JsonFormatter(
            "%(asctime)s %(levelname)s %(name)s %(message)s %(job_id)s %(tenant)s %(round)s",
            rename_fields={"levelname": "level", "asctime": "time"})
    return logging.Formatter(
        "%(asctime)s %(levelname)s %(name)s [job=%(job_id)s round=%(round)s] %(message)s")


class _SettingsFormatter(logging.Formatter):
    """The format the settings name, chosen on the first record."""

    def __init__(self) -> None:
        super().__init__()
        self._chosen: logging.Formatter | None = None

    def format(self, record: logging.LogRecord) -> str:
        if self._chosen is None:
            from shared.config import get_settings

            self._chosen = _formatter(get_settings().log_format)
        return self._chosen.format(record)
