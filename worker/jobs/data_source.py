"""Where a job's data comes from: the one point where a job picks its dataset.

``for_job(job)`` gives the job's ``JobData``: the SQL sandbox over the DuckDB file it
asks about and the system prompt written for that data, byte-identical for every job
on the same data and day so that the prompt cache holds. The runner and economy mode
ask here and nowhere else.

A job without a dataset reads the deployment's built-in dataset
(``SUNRISE_DUCKDB_PATH``, ``BuiltInDataset``). A job naming one (``TenantDatasets``)
reads the version it pinned when it was submitted -- one DuckDB file,
``engine.datasets.version_path``, opened read-only in a sandbox that can read no
other file -- and is told about it by that version's prompt
(``worker.datasets.prompt.build_dataset_prompt``: its profile and the dataset's
annotations, byte-identical for every job on that version, annotations and day).
A worker keeps at most ``OPEN_VERSIONS`` version sandboxes open (least recently
used closed first); a job holds its version's sandbox through a handle that reopens
it if it was closed meanwhile, so eviction never fails a running job.

A live dataset's version has no file: its jobs query the source through the process's
live engines (``worker/jobs/live_engines.py``), and its prompt names the engine and
dialect (``PromptEngine``), byte-identical per version as a snapshot's; engines open
with ``engine.dataset_query.open_live``, as the statements run outside jobs (run_sql,
verified queries, schedule conditions) open theirs. ``JobData``
says when the job's data is from (``data_as_of``): a snapshot's import end, the
built-in file's time, a live job's first query.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import json
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from sqlalchemy import select

from engine.dataset_query import open_live
from engine.datasets import TableProfile, version_path
from engine.policies import FilterRefused, PolicedQueries, applied_for, policed_profiles
from engine.sql.query_result import QueryResult
from engine.sql.sandbox import SqlSandbox, get_sandbox, sandbox_settings
from shared.config import Settings
from shared.dataset_annotations import Annotations
from shared.db import session_factory
from shared.errors import JobFailure, SunriseError
from shared.models import Dataset, DatasetVersion
from shared.principal import Principal, principal_for_job
from shared.sealed import UnreadableSecret, unseal
from worker.agent.system_prompt import PromptEngine, build_system_prompt
from worker.datasets.prompt import build_dataset_prompt
from worker.jobs.live_engines import LiveEngines, LiveQueries
from worker.jobs.store import ClaimedJob

logger = logging.getLogger(__name__)

OPEN_VERSIONS = 8
CACHED_PROMPTS = 64


@dataclasses.dataclass(frozen=True)
class JobData:
    """What a job queries and what the model is told about it. ``as_of`` is the moment
    the data is from (fixed for files; a live handle's first query); ``cancel`` stops
    the job's running query on a live source (None: nothing to stop there)."""

    sandbox: Any  # SqlSandbox, or a handle with its run()
    system_prompt: str
    as_of: dt.datetime | None = None
    cancel: Callable[[], None] | None = None
    # The row policies and masks the job runs under, one line each (for the audit).
    policies: tuple[str, ...] = ()

    def data_as_of(self) -> dt.datetime | None:
        first = getattr(self.sandbox, "first_query_at", None)
        return first if first is not None else self.as_of


@dataclasses.dataclass(frozen=True)
class VersionFacts:
    """What a dataset version's jobs need of its rows, immutable once it is ready."""

    mode: str
    finished_at: dt.datetime
    engine: dict | None
    source_url: str | None  # sealed
    sources: list


def file_time(path: str | Path) -> dt.datetime | None:
    """A file's modification time as naive UTC (the built-in dataset's data_as_of)."""
    try:
        return dt.datetime.fromtimestamp(os.path.getmtime(path), dt.UTC).replace(tzinfo=None)
    except OSError:
        return None


class DataSource(Protocol):
    def for_job(self, job: ClaimedJob) -> JobData:
        """The job's data; raises ``JobFailure`` when it cannot be had."""
        ...


class BuiltInDataset:
    """Every job reads the built-in dataset (``SUNRISE_DUCKDB_PATH``); the prompt carries
    its full schema and today's date. Its sandbox opens (and the file is checked) when
    this is built -- or, when the file does not exist (``sunrise sample-data`` never
    ran), on the first job after it appears: the worker says so once and goes on with
    the reaper, imports and jobs on tenants' datasets, while a job asking about the
    built-in data fails ``dataset_not_found``. A job naming another dataset fails
    ``dataset_not_found`` too: its data is not here."""

    def __init__(self, settings: Settings, *, sandbox: SqlSandbox | None = None,
                 today: Callable[[], dt.date] = dt.date.today):
        self.settings = settings
        self.today = today
        self._sandbox = sandbox
        if sandbox is None and not Path(settings.duckdb_path).exists():
            logger.warning("the built-in dataset %s does not exist (build it with `sunrise "
                           "sample-data`); jobs without a dataset fail until it does",
                           settings.duckdb_path)
        elif sandbox is None:
            self._sandbox = self._open()

    @property
    def sandbox(self) -> SqlSandbox:
        """The built-in dataset's sandbox, opened on first use; raises ``JobFailure``
        (``dataset_not_found``) while its file does not exist."""
        if self._sandbox is None:
            if not Path(self.settings.duckdb_path).exists():
                raise JobFailure("dataset_not_found", "The deployment's built-in dataset has "
                                 "not been built yet (its operator runs `sunrise sample-data`); "
                                 "ask about one of your own datasets instead.")
            self._sandbox = self._open()
        return self._sandbox

    def _open(self) -> SqlSandbox:
        # get_sandbox keeps one per process and path: threads racing here share it.
        return get_sandbox(self.settings.duckdb_path, **sandbox_settings(self.settings))

    def system_prompt(self) -> str:
        return build_system_prompt(self.sandbox.describe_schema(), self.today())

    def for_job(self, job: ClaimedJob) -> JobData:
        if job.dataset_id is not None:
            raise JobFailure("dataset_not_found", f"Dataset {job.dataset_id} is not "
                             "available to this worker.")
        return JobData(self.sandbox, self.system_prompt(),
                       as_of=file_time(self.settings.duckdb_path))


class TenantDatasets:
    """Jobs naming a dataset read the version they pinned; the others go to ``builtin``."""

    def __init__(self, settings: Settings, *, builtin: DataSource | None = None,
                 today: Callable[[], dt.date] = dt.date.today, capacity: int = OPEN_VERSIONS,
                 principal_of: Callable[[Any, ClaimedJob], Principal] = principal_for_job):
        self.settings = settings
        self.principal_of = principal_of
        self.builtin = builtin or BuiltInDataset(settings, today=today)
        self.sessions = session_factory(settings.database_url)
        self.today = today
        self.capacity = capacity
        self._lock = threading.Lock()
        self._open: OrderedDict[tuple[str, int], SqlSandbox] = OrderedDict()
        self._prompts: OrderedDict[tuple, str] = OrderedDict()
        self._facts: OrderedDict[tuple[str, int], VersionFacts] = OrderedDict()
        self._tables: OrderedDict[tuple[str, int], list[TableProfile]] = OrderedDict()
        self.live = LiveEngines(self._open_live)

    def for_job(self, job: ClaimedJob) -> JobData:
        if job.dataset_id is None:
            return self.builtin.for_job(job)
        key = (job.dataset_id, job.dataset_version)
        facts = self.version_facts(key) if job.dataset_version else None
        if facts is not None and facts.mode == "live":
            return self._live_job(job, key, facts)
        path = version_path(self.settings.data_dir, *key) if job.dataset_version else None
        if facts is None or path is None or not path.exists():
            raise JobFailure("dataset_not_found", f"Version {job.dataset_version} of dataset "
                             f"{job.dataset_id} is not available (deleted?).")
        self.open_version(key, path)  # opened now: a file that cannot be opened fails the job here
        data = JobData(VersionSandbox(self, key, path), self.version_prompt(*key),
                       as_of=facts.finished_at)
        return self._policed(job, key, data, "duckdb")

    def _live_job(self, job: ClaimedJob, key: tuple[str, int], facts: VersionFacts) -> JobData:
        """The job's handle on its live version; the engine opened now, so that a source
        that cannot be reached fails the job here, saying so."""
        try:
            url = unseal(self.settings.secret_keys, facts.source_url or "")
            self.live.release(key, self.live.acquire(key, url))
        except (UnreadableSecret, SunriseError) as exc:
            code = exc.code if isinstance(exc, SunriseError) else "source_unreachable"
            raise JobFailure(code, str(getattr(exc, "detail", exc))) from None
        prompt = self.version_prompt(*key)
        with self._lock:
            tables = self._tables[key]
        handle = LiveQueries(self.live, key, url, job.id, tables)
        data = JobData(handle, prompt, cancel=lambda: self.live.cancel(job.id, key))
        return self._policed(job, key, data, (facts.engine or {}).get("dialect") or "duckdb")

    def _policed(self, job: ClaimedJob, key: tuple[str, int], data: JobData,
                 dialect: str) -> JobData:
        """``data`` as the job's principal may see it: unchanged when no policy or mask of
        the dataset binds them; else every query rewritten under them (``PolicedQueries``:
        the tool's results, summaries, charts and the number check's evidence all come
        from it) and a prompt whose figures and value hints are recomputed under them,
        without the dataset's examples (their SQL and questions may name hidden values).
        """
        with self.sessions() as s:
            rules = s.execute(select(Dataset.policies, Dataset.masks)
                              .where(Dataset.id == key[0])).first()
            if rules is None or not (rules.policies or rules.masks):
                return data
            principal = self.principal_of(s, job)
        applied = applied_for(rules.policies, rules.masks, principal)
        if applied.empty:
            return data
        with self._lock:
            profiles = list(self._tables[key])
        schema = [(t.name, [(c.name, c.type) for c in t.columns]) for t in profiles]
        try:
            handle = PolicedQueries(data.sandbox, applied, dialect=dialect, schema=schema)
        except FilterRefused as exc:  # saved under another engine's dialect, say
            raise JobFailure("policy_invalid", f"A row policy of this dataset cannot be "
                             f"applied ({exc}); an admin must correct it.") from None
        logger.info("job %s: policies applied: %s", job.id, "; ".join(applied.describe()))
        prompt = self.policed_prompt(key, applied.key(), handle, profiles)
        return dataclasses.replace(data, sandbox=handle, system_prompt=prompt,
                                   policies=tuple(applied.describe()))

    def policed_prompt(self, key: tuple[str, int], policy_key: str, handle: PolicedQueries,
                       profiles: list[TableProfile]) -> str:
        """The version's prompt for one effective policy (``policy_key``), built once per
        (version, annotations, day, policy)."""
        with self.sessions() as s:
            notes = s.scalar(select(Dataset.annotations).where(Dataset.id == key[0]))
        cache_key = (*key, self.today(), json.dumps(notes or {}, sort_keys=True), policy_key)
        with self._lock:
            cached = self._prompts.get(cache_key)
        if cached is not None:
            return cached
        facts = self.version_facts(key)
        annotations = Annotations.model_validate({**(notes or {}), "examples": []})
        prompt = build_dataset_prompt(policed_profiles(profiles, handle), cache_key[2],
                                      annotations,
                                      token_budget=self.settings.dataset_prompt_token_budget,
                                      engine=PromptEngine.of(facts.engine if facts else None))
        with self._lock:
            self._prompts[cache_key] = prompt
            while len(self._prompts) > CACHED_PROMPTS:
                self._prompts.popitem(last=False)
        return prompt

    def _open_live(self, key: tuple[str, int], url: str) -> Any:
        # As run_sql, verified queries and schedule conditions open theirs.
        return open_live(self.settings, key[0], url)

    def version_facts(self, key: tuple[str, int]) -> VersionFacts | None:
        """The version's ``VersionFacts`` (read once per process), None when it is gone."""
        with self._lock:
            facts = self._facts.get(key)
        if facts is not None:
            return facts
        with self.sessions() as s:
            row = s.execute(select(Dataset.mode, DatasetVersion.created_at, DatasetVersion.engine,
                                   Dataset.source_url, Dataset.sources)
                            .join(DatasetVersion, DatasetVersion.dataset_id == Dataset.id)
                            .where(Dataset.id == key[0], DatasetVersion.version == key[1])).first()
        if row is None:
            return None
        facts = VersionFacts(row.mode or "snapshot", row.created_at, row.engine, row.source_url,
                             row.sources)
        with self._lock:
            self._facts[key] = facts
            while len(self._facts) > CACHED_PROMPTS:
                self._facts.popitem(last=False)
        return facts

    def open_version(self, key: tuple[str, int], path: Path) -> SqlSandbox:
        """The open sandbox of a version, opening it (and closing the least recently used
        one past ``capacity``) if need be."""
        with self._lock:
            sandbox = self._open.get(key)
            if sandbox is not None and not sandbox.closed:
                self._open.move_to_end(key)
                return sandbox
            sandbox = self._open[key] = SqlSandbox(path, **sandbox_settings(self.settings))
            evicted = []
            while len(self._open) > self.capacity:
                evicted.append(self._open.popitem(last=False)[1])
        for old in evicted:
            old.close()
        return sandbox

    def version_prompt(self, dataset_id: str, version: int) -> str:
        """The version's prompt for today, built once per (version, annotations, day)."""
        with self.sessions() as s:
            notes = s.scalar(select(Dataset.annotations).where(Dataset.id == dataset_id))
            key = (dataset_id, version, self.today(), json.dumps(notes or {}, sort_keys=True))
            with self._lock:
                cached = self._prompts.get(key)
            if cached is not None and (dataset_id, version) in self._tables:
                return cached
            tables = s.scalar(select(DatasetVersion.tables).where(
                DatasetVersion.dataset_id == dataset_id, DatasetVersion.version == version))
        if tables is None:
            raise JobFailure("dataset_not_found", f"Version {version} of dataset {dataset_id} "
                             "is not available (deleted?).")
        facts = self.version_facts((dataset_id, version))
        profiles = [TableProfile.from_dict(t) for t in tables]
        prompt = build_dataset_prompt(profiles, key[2], Annotations.model_validate(notes or {}),
                                      token_budget=self.settings.dataset_prompt_token_budget,
                                      engine=PromptEngine.of(facts.engine if facts else None))
        with self._lock:
            self._tables[(dataset_id, version)] = profiles
            while len(self._tables) > CACHED_PROMPTS:
                self._tables.popitem(last=False)
            self._prompts[key] = prompt
            while len(self._prompts) > CACHED_PROMPTS:
                self._prompts.popitem(last=False)
        return prompt

    def close(self) -> None:
        with self._lock:
            sandboxes, self._open = list(self._open.values()), OrderedDict()
        for sandbox in sandboxes:
            sandbox.close()
        self.live.close()


@dataclasses.dataclass(frozen=True)
class VersionSandbox:
    """A job's hold on its version's sandbox: each query asks ``TenantDatasets`` for it,
    which reopens it if it was closed to make room."""

    datasets: TenantDatasets
    key: tuple[str, int]
    path: Path

    def run(self, sql: str, **kwargs: Any) -> QueryResult:
        return self.datasets.open_version(self.key, self.path).run(sql, **kwargs)

    def describe_schema(self) -> list[tuple[str, list[tuple[str, str]]]]:
        return self.datasets.open_version(self.key, self.path).describe_schema()
