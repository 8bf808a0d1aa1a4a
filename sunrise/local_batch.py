"""In-process batches for ``sunrise report --local``: the same rows, runner, economy
driver and report assembly as the worker, with no Redis, Celery or API."""
from __future__ import annotations

import concurrent.futures
import logging
from collections.abc import Callable
from typing import Any

from shared import batches as batch_rows
from shared.config import Settings
from shared.db import session_scope
from shared.keys import get_or_create_tenant
from shared.migrate import upgrade
from shared.models import Batch, Job
from shared.reports.document import unpack
from sunrise.local import LOCAL_TENANT, ensure_sample_db
from worker.batches import BatchCoordinator
from worker.economy import EconomyBatch
from worker.runner import JobRunner

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
        batch = batch_rows.create_batch(s, tenant_id=tenant.id, questions=questions,
                                        model=settings.model, title=title, mode=mode,
                                        conversation=conversation)
        batch_id = batch.id
        job_ids = batch_rows.ordered_job_ids(s, batch_id)

    def report_progress(_job: Job | None = None) -> None:
        with session_scope(settings.database_url) as s:
            on_progress(batch_rows.load_view(s, s.get(Batch, batch_id)))

    runner = runner or JobRunner(settings)
    runner.after_finish.append(report_progress)
    try:
        report_progress()
        if mode == "economy":
            EconomyBatch(runner).run(batch_id)
        elif conversation == "shared":
            for job_id in job_ids:
                runner.run(job_id)
        else:
            # The first question alone writes the prompt cache the others then read.
            runner.run(job_ids[0])
            with concurrent.futures.ThreadPoolExecutor(max(1, concurrency)) as pool:
                list(pool.map(runner.run, job_ids[1:]))
    finally:
        runner.after_finish.remove(report_progress)
    BatchCoordinator(settings, None, None).assemble(batch_id)
    with session_scope(settings.database_url) as s:
        batch = s.get(Batch, batch_id)
        on_progress(batch_rows.load_view(s, batch))
        return unpack(batch.report)
