"""In-process batches for ``sunrise report --local``: the same rows, release rules, runner,
economy driver and report assembly as the worker, with no Redis, Celery or API.

The batch's own rules (``shared.batch_rows.release_ready``) decide which questions run
and when, exactly as on the workers; released questions go to a thread pool instead
of the queue.
"""
from __future__ import annotations

import concurrent.futures
import logging
import threading
from collections.abc import Callable
from typing import Any

from shared import batch_rows
from shared.batch_view import load_view
from shared.config import Settings
from shared.db import session_scope
from shared.keys import get_or_create_tenant
from shared.migrate import upgrade
from shared.models import Batch, Job
from shared.reports.document import unpack
from sunrise.local import LOCAL_TENANT, ensure_sample_db
from worker.batches.coordinator import BatchCoordinator
from worker.batches.message_batches import EconomyBatch
from worker.jobs.runner import JobRunner

logger = logging.getLogger(__name__)


def run_batch_local(settings: Settings, questions: list[str], *, title: str = "",
                    mode: str = "standard", conversation: str = "separate", concurrency: int = 4,
                    on_progress: Callable[[dict[str, Any]], None] = lambda view: None,
                    runner: JobRunner | None = None) -> dict[str, Any]:
    """Run a whole batch right here and return its report document.

    Migrates the configured database and builds the sample DuckDB if needed. Calls
    ``on_progress(batch view)`` once at the start and after every question.
    """
    upgrade(settings.database_url)
    ensure_sample_db(settings)
    with session_scope(settings.database_url) as s:
        tenant = get_or_create_tenant(s, LOCAL_TENANT)
        batch_id = batch_rows.create_batch(s, tenant_id=tenant.id, questions=questions,
                                           model=settings.model, title=title, mode=mode,
                                           conversation=conversation).id

    def report_progress(_job: Job | None = None) -> None:
        with session_scope(settings.database_url) as s:
            on_progress(load_view(s, s.get(Batch, batch_id)))

    runner = runner or JobRunner(settings)
    with concurrent.futures.ThreadPoolExecutor(max(1, concurrency)) as pool:
        pending = _Pending(pool, runner.run)
        coordinator = BatchCoordinator(settings, run_jobs=pending.submit)
        callbacks = [coordinator.on_job_finished, report_progress]
        runner.after_finish.extend(callbacks)
        try:
            report_progress()
            if mode == "economy":
                EconomyBatch(runner).run(batch_id)
            else:
                with session_scope(settings.database_url) as s:
                    pending.submit(batch_rows.release_ready(s, batch_id))
                pending.wait()
        finally:
            for callback in callbacks:
                runner.after_finish.remove(callback)
    coordinator.assemble(batch_id)  # done already when the last question ended
    with session_scope(settings.database_url) as s:
        batch = s.get(Batch, batch_id)
        on_progress(load_view(s, batch))
        return unpack(batch.report)


class _Pending:
    """Jobs handed to the pool, including those their predecessors release as they end."""

    def __init__(self, pool: concurrent.futures.Executor, run: Callable[[str], Any]):
        self.pool = pool
        self.run = run
        self.futures: list[concurrent.futures.Future] = []
        self.lock = threading.Lock()

    def submit(self, job_ids: list[str]) -> None:
        with self.lock:
            self.futures += [self.pool.submit(self.run, job_id) for job_id in job_ids]

    def wait(self) -> None:
        """Until every job submitted has run. A job releases its successors before its own
        future resolves, so once every known future has, no more can come."""
        done = 0
        while True:
            with self.lock:
                batch = self.futures[done:]
            if not batch:
                return
            for future in batch:
                future.result()
            done += len(batch)
