"""Checking a PATCH's example questions: each example's SQL runs in the SQL sandbox on
the dataset's current version, exactly as the model's queries would, before it is kept.

The sandbox (``engine/sql/sandbox.py``: read-only, no file or network access, one
read statement, time and memory capped, in a process of its own) is opened for the
check and closed after it; PATCH is rare, and the API keeps no DuckDB file open.
"""
from __future__ import annotations

import logging
from collections.abc import Sequence

import duckdb

from engine.datasets import version_path
from engine.sql.sandbox import SqlSandbox, sandbox_settings
from shared.config import Settings
from shared.dataset_annotations import Example
from shared.errors import ServiceUnavailable, ValidationFailed

logger = logging.getLogger(__name__)


def check_examples(settings: Settings, data_dir: str, dataset_id: str, version: int,
                   examples: Sequence[Example]) -> None:
    """Raise ``ValidationFailed`` naming each example whose SQL fails, with DuckDB's (or
    the sandbox's) error; returns quietly when all of them run."""
    try:
        sandbox = SqlSandbox(version_path(data_dir, dataset_id, version),
                             **{**sandbox_settings(settings), "processes": 1})
    except (duckdb.Error, RuntimeError) as exc:
        logger.warning("dataset %s v%s: cannot open it to check examples: %s", dataset_id,
                       version, exc)
        raise ServiceUnavailable(f"Version {version} of dataset {dataset_id} cannot be "
                                 "opened to check the examples; try again.",
                                 retry_after=5) from None
    try:
        failures = []
        for index, example in enumerate(examples):
            result = sandbox.run(example.sql, label=f"dataset {dataset_id} example {index + 1}")
            if result.is_error:
                failures.append({"example": index + 1, "question": example.question,
                                 "error": result.error})
    finally:
        sandbox.close()
    if failures:
        raise ValidationFailed("; ".join(f"example {f['example']} ({f['question'][:80]!r}): "
                                         f"{f['error']}" for f in failures), examples=failures)
