"""Where a job's data comes from: the one point where a job picks its dataset.

``for_job(job)`` gives the job's ``JobData``: the SQL sandbox over the DuckDB file it
asks about and the system prompt written for that data, byte-identical for every job
on the same data and day so that the prompt cache holds. The runner and economy mode
ask here and nowhere else.

Today every job reads the deployment's built-in dataset (``SUNRISE_DUCKDB_PATH``,
``BuiltInDataset``). A job that names a dataset resolves, in a source beside it, to
the version it pinned -- one DuckDB file, ``worker.datasets.version_path`` -- and that
version's prompt (``worker.dataset_prompt.build_dataset_prompt``).
"""
from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable
from typing import Protocol

from shared.config import Settings
from shared.errors import JobFailure
from worker.job_store import ClaimedJob
from worker.sql_sandbox import SqlSandbox, get_sandbox, sandbox_settings
from worker.system_prompt import build_system_prompt


@dataclasses.dataclass(frozen=True)
class JobData:
    """What a job queries and what the model is told about it."""

    sandbox: SqlSandbox
    system_prompt: str


class DataSource(Protocol):
    def for_job(self, job: ClaimedJob) -> JobData:
        """The job's data; raises ``JobFailure`` when it cannot be had."""
        ...


class BuiltInDataset:
    """Every job reads the built-in dataset. The sandbox opens (and its file is checked)
    when this is built; the prompt carries the full schema and today's date. A job
    naming another dataset fails ``dataset_not_found``: its data is not here."""

    def __init__(self, settings: Settings, *, sandbox: SqlSandbox | None = None,
                 today: Callable[[], dt.date] = dt.date.today):
        self.sandbox = sandbox or get_sandbox(settings.duckdb_path, **sandbox_settings(settings))
        self.today = today

    def system_prompt(self) -> str:
        return build_system_prompt(self.sandbox.describe_schema(), self.today())

    def for_job(self, job: ClaimedJob) -> JobData:
        if job.dataset_id is not None:
            raise JobFailure("dataset_not_found", f"Dataset {job.dataset_id} is not "
                             "available to this worker.")
        return JobData(self.sandbox, self.system_prompt())
