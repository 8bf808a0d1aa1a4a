"""Batch progress and completion on the worker side.

``BatchCoordinator.on_job_finished`` is a ``JobRunner`` after-finish hook: after a
batch job's terminal event it releases the batch's next held jobs (see
``shared.batches``), publishes a ``progress`` event on the batch's stream and, once
every job has ended, asks for the report to be assembled. This plays the part of
a Celery chord without its weak spot: a chord's callback waits on task results
and is lost when a header task fails, while here the job rows say when the batch
is done, whatever each job's outcome, and the assembly is idempotent, so being
asked twice (two last jobs finishing together, a status read healing a lost
message) costs only a little work.

Chart SVGs are rendered as each job ends, while the others still run, and kept in
Redis for the assembly; what the cache misses (evicted, Redis down) the assembly
renders itself, so the cache only ever saves time.
"""
from __future__ import annotations

import base64
import json
import logging
import zlib
from collections.abc import Callable
from typing import Any

from celery import Celery
from sqlalchemy import select, update

from shared import batch_rows
from shared.batch_view import batch_view, load_view
from shared.celery_factory import ASSEMBLE_BATCH, REPORTS_QUEUE
from shared.config import Settings
from shared.db import session_factory
from shared.db_retry import retry_transient
from shared.enqueue import enqueue_jobs
from shared.events import EventLog
from shared.job_state import TERMINAL
from shared.models import Batch, Job, utcnow
from shared.reports.chart_svg import render_charts, spec_to_svg
from shared.reports.document import build_document, pack
from worker.batches.webhook import deliver_webhook

logger = logging.getLogger(__name__)

STREAM_PAGE = 1000  # events read at a time from a batch's stream


class BatchCoordinator:
    """Keeps batches moving. One per worker process; thread-safe (state lives in the DB).

    Released jobs are enqueued on ``celery`` and the assembly queued there; without
    Celery (``sunrise report --local``) released jobs go to ``run_jobs`` and the report
    is assembled right here.
    """

    def __init__(self, settings: Settings, celery: Celery | None = None,
                 events: EventLog | None = None, *,
                 run_jobs: Callable[[list[str]], Any] | None = None,
                 after_assembly: list[Callable[[str], None]] | None = None):
        self.settings = settings
        self.sessions = session_factory(settings.database_url)
        self.celery = celery
        self.events = events
        self.svg_cache = events.client if events is not None else None
        self.run_jobs = run_jobs or self._enqueue
        # Called with the batch id once its report is stored (again on a repeated
        # assembly of a completed batch: hooks are idempotent). A schedule's run delivers.
        self.after_assembly = after_assembly or []

    # -- while jobs finish ---------------------------------------------------------

    def on_job_finished(self, job: Job) -> None:
        """After-finish hook: release, report progress, and trigger assembly at the end."""
        if job.batch_id is None:
            return
        released = self._release(job.batch_id)
        if released:
            self.run_jobs(released)
        # Before counting: whoever sees the batch done assembles it, and should find
        # this job's charts ready.
        self._prerender(job)
        if self._report_progress(job):
            self.request_assembly(job.batch_id)

    @retry_transient(give_up_after_s=30, max_wait_s=2)
    def _report_progress(self, job: Job) -> bool:
        """Publish the batch's counts after ``job``; True when every job has ended.

        Counted and published under the batch row's lock: two jobs ending together take
        turns, so the stream's progress never goes back (a "2 of 3" after the "3 of 3"
        of a job that counted later but published first), and never comes after the
        ``completed`` the assembly publishes under the same lock (a job that reports
        after it finds the batch completed and its question already reported)."""
        with self.sessions.begin() as s:
            batch = s.scalar(select(Batch).where(Batch.id == job.batch_id).with_for_update())
            if batch.status == "completed":  # its assembly reported every question
                return False
            counts = batch_rows.status_counts(s, job.batch_id)
            usage = batch_rows.usage_totals(s, job.batch_id)
            self._publish(job.batch_id, "progress",
                          _progress(job, batch_view(batch, counts, usage, [])))
            return batch_rows.is_done(counts, batch.total)

    def _enqueue(self, job_ids: list[str]) -> None:
        if self.celery is not None:
            enqueue_jobs(self.celery, self.sessions, job_ids, queue=REPORTS_QUEUE)

    @retry_transient(give_up_after_s=30, max_wait_s=2)
    def _release(self, batch_id: str) -> list[str]:
        # Many jobs of one batch finish at once and take turns on its row lock.
        with self.sessions.begin() as s:
            return batch_rows.release_ready(s, batch_id)

    def request_assembly(self, batch_id: str) -> None:
        """Queue the report's assembly (or, without Celery, do it right here)."""
        if self.celery is None:
            self.assemble(batch_id)
            return
        try:
            self.celery.send_task(ASSEMBLE_BATCH, args=[batch_id], queue=REPORTS_QUEUE)
        except Exception as exc:  # a status read of the batch asks again later
            logger.warning("batch %s: could not queue its assembly: %s", batch_id, exc)

    # -- at the end ------------------------------------------------------------------

    def assemble(self, batch_id: str) -> str | None:
        """Build, render and store the report once every job has ended; then the webhook.

        Idempotent: a completed batch is left as it is (only a webhook still pending is
        retried), and of two concurrent assemblies only the first store wins. Returns
        the batch status, or None for an unknown batch.
        """
        with self.sessions() as s:
            batch = s.get(Batch, batch_id)
            if batch is None:
                logger.warning("batch %s: nothing to assemble, no such batch", batch_id)
                return None
            if batch.status == "completed":
                if batch.webhook_url and batch.webhook_status == "pending":
                    self._call_webhook(batch_id)
                self._after_assembly(batch_id)
                return batch.status
            jobs = list(s.scalars(select(Job).where(Job.batch_id == batch_id)))
            open_jobs = [j.id for j in jobs if j.status not in TERMINAL]
            if open_jobs or len(jobs) < batch.total:
                logger.info("batch %s: %d jobs still open; not assembling yet", batch_id,
                            len(open_jobs))
                return batch.status
            document = build_document(batch, jobs, self.settings.price_for,
                                      batch_rows.answer_queries(s, jobs))
        self._fill_from_cache(document)
        charts = render_charts(document)
        blob = pack(document)
        with self.sessions.begin() as s:
            stored = s.execute(update(Batch).where(Batch.id == batch_id,
                                                   Batch.status == "running")
                               .values(status="completed", completed_at=utcnow(), report=blob)
                               ).rowcount
            batch = s.get(Batch, batch_id)
            view = load_view(s, batch)
            if stored:
                # Under the row lock the UPDATE took (see _report_progress): one progress
                # per question, then completed, as the events endpoint promises -- a job
                # whose own report has not run yet is reported here.
                for job in self._unreported(batch_id, jobs):
                    self._publish(batch_id, "progress", _progress(job, view))
                self._publish(batch_id, "completed", view)
        if not stored:
            return "completed"
        logger.info("batch %s: report assembled (%d questions, %d charts, %d bytes stored)",
                    batch_id, document["total"], charts, len(blob))
        if batch.webhook_url:
            self._call_webhook(batch_id)
        self._after_assembly(batch_id)
        return "completed"

    def _after_assembly(self, batch_id: str) -> None:
        for hook in self.after_assembly:
            try:
                hook(batch_id)
            except Exception:  # a hook's failure is its own; the tick retries schedules
                logger.exception("batch %s: after-assembly hook failed", batch_id)

    # -- chart SVGs rendered ahead of the assembly ----------------------------------------

    def _prerender(self, job: Job) -> None:
        if self.svg_cache is None or job.status != "succeeded" or not job.charts:
            return
        try:
            svgs = [spec_to_svg(c["vega_lite"], id_prefix=f"q{job.batch_index}c{n}-")
                    if c.get("vega_lite") else None for n, c in enumerate(job.charts)]
            packed = base64.b64encode(zlib.compress(json.dumps(svgs).encode())).decode()
            self.svg_cache.set(_svg_key(job.id), packed, ex=self.settings.events_ttl_s)
        except Exception as exc:  # the assembly renders whatever is not cached
            logger.warning("job %s: charts not pre-rendered: %s", job.id, exc)

    def _fill_from_cache(self, document: dict[str, Any]) -> None:
        if self.svg_cache is None:
            return
        questions = [q for q in document["questions"] if q["charts"]]
        try:
            cached = (self.svg_cache.mget([_svg_key(q["job_id"]) for q in questions])
                      if questions else [])
        except Exception as exc:
            logger.warning("batch %s: pre-rendered charts unavailable: %s",
                           document["batch_id"], exc)
            return
        for question, blob in zip(questions, cached):
            if blob is None:
                continue
            svgs = json.loads(zlib.decompress(base64.b64decode(blob)))
            if len(svgs) == len(question["charts"]):
                for chart, svg in zip(question["charts"], svgs):
                    chart["svg"] = svg

    def _call_webhook(self, batch_id: str) -> None:
        with self.sessions() as s:
            batch = s.get(Batch, batch_id)
            payload = {"event": "batch.completed", **load_view(s, batch)}
        del payload["job_ids"]
        deliver_webhook(self.settings, self.sessions, batch_id, batch.webhook_url, payload)

    def _unreported(self, batch_id: str, jobs: list[Job]) -> list[Job]:
        """``jobs`` whose progress is not on the batch's stream yet (none when the stream
        cannot be read: the rows are the truth, progress events a convenience)."""
        if self.events is None:
            return []
        reported, after = set(), "0-0"
        try:
            while page := self.events.read(batch_id, after, count=STREAM_PAGE):
                reported.update(e.data.get("job_id") for e in page if e.event == "progress")
                after = page[-1].id
        except Exception as exc:
            logger.warning("batch %s: could not read its progress: %s", batch_id, exc)
            return []
        return sorted((job for job in jobs if job.id not in reported),
                      key=lambda job: job.batch_index)

    def _publish(self, batch_id: str, event: str, data: dict[str, Any]) -> None:
        if self.events is None:
            return
        try:
            self.events.publish(batch_id, event, data)
        except Exception as exc:  # progress events are a convenience; the rows are the truth
            logger.warning("batch %s: could not publish %s: %s", batch_id, event, exc)


def _progress(job: Job, view: dict[str, Any]) -> dict[str, Any]:
    """A ``progress`` event's data: the job that ended, then the batch's view (its
    counts and usage) without the list of job ids."""
    return {"job_id": job.id, "index": job.batch_index, "job_status": job.status,
            **{key: value for key, value in view.items() if key != "job_ids"}}


def _svg_key(job_id: str) -> str:
    return f"sunrise:batch-svg:{job_id}"
