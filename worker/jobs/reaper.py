"""The reaper (run by Celery beat every ``reaper_interval_s``): nothing accepted is lost.

- A ``running`` job whose heartbeat is older than ``stale_after_s`` (its worker died)
  goes back to ``queued`` and is enqueued again, or, once it has used
  ``max_attempts`` attempts, ends ``failed`` with ``worker_lost``: its audit entry is
  written with that change, as every job ending's is, and its terminal event is
  published.
- A ``queued`` job that never reached the broker (``enqueued_at`` unset: Redis was
  down when the API committed it) is enqueued.
- A ``queued`` job whose message the broker lost (Redis restarted without
  persistence) is enqueued again: when the database holds more enqueued, unclaimed
  jobs for a queue than the broker holds messages (waiting in the queue, or delivered
  to a worker and not yet acknowledged), the oldest of those enqueued more than
  ``requeue_queued_after_s`` ago are sent again. A job merely waiting in a long
  backlog, or taken by a worker that is still starting up, is not duplicated.
- A dataset import whose worker died (heartbeat older than ``stale_after_s``) is
  made claimable and sent again, or, once it has used ``max_attempts`` attempts,
  fails with ``import_abandoned`` and its ``failed`` event is published; one never claimed ``requeue_queued_after_s`` after
  it was asked for is sent again when the broker holds fewer messages than such
  imports (as for jobs). The import's claim lets only one worker build it. Dataset
  versions no job pins any more are removed, and uploads abandoned mid-request
  (``worker/datasets/versions.py``).

Every change is a guarded UPDATE and every run of a job is a guarded claim, so two
reapers at once, or a duplicate message, do no harm; a Redis lock still keeps sweeps
from overlapping, so that they do not send the same job twice.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
from collections.abc import Callable, Iterator

from celery import Celery
from kombu.exceptions import ChannelError
from sqlalchemy import func, select

from shared import dataset_state, job_state
from shared.audit import record_job
from shared.celery_factory import DATASETS_QUEUE
from shared.config import Settings
from shared.db import session_factory
from shared.enqueue import enqueue_jobs, send_import
from shared.events import EventLog
from shared.models import Dataset, Job, utcnow
from shared.redis_client import redis_for
from worker.datasets.import_run import give_up
from worker.datasets.versions import remove_abandoned_uploads, retire_versions
from worker.jobs.runner import announce_end

logger = logging.getLogger(__name__)

# A job committed this recently may still be on its way to the broker from the API.
NEVER_SENT_GRACE_S = 2.0
LOCK_KEY = "sunrise:reaper:lock"


class Reaper:
    """One sweep per :meth:`run_once`; build it per run or keep it, it holds no state."""

    def __init__(self, settings: Settings, celery: Celery, *, events=None,
                 after_finish: list[Callable[[Job], None]] | None = None):
        self.settings = settings
        self.celery = celery
        self.sessions = session_factory(settings.database_url)
        self._events = events
        # Called with each job the reaper fails for good (e.g. batch progress).
        self.after_finish = list(after_finish or [])

    @property
    def events(self):
        if self._events is None:
            self._events = EventLog(redis_for(self.settings.redis_url),
                                    maxlen=self.settings.events_maxlen,
                                    ttl_s=self.settings.events_ttl_s)
        return self._events

    def run_once(self) -> dict[str, int]:
        """Recover stale running jobs and (re-)enqueue lost queued ones.

        Returns counts: ``stale`` running jobs found, ``failed`` for good, ``requeued``
        messages sent. Database errors propagate (beat runs it again next interval);
        broker and event errors are logged. A sweep that finds another one running
        returns at once with no counts.
        """
        with self._exclusive() as alone:
            if not alone:
                logger.info("reaper: another sweep is running; skipped")
                return {"stale": 0, "failed": 0, "requeued": 0}
            return self._sweep()

    @contextlib.contextmanager
    def _exclusive(self) -> Iterator[bool]:
        try:
            lock = redis_for(self.settings.redis_url).lock(
                LOCK_KEY, timeout=max(30.0, 3 * self.settings.reaper_interval_s), blocking=False)
            acquired = lock.acquire()
        except Exception as exc:  # no Redis: sweep anyway, the database guards suffice
            logger.warning("reaper: lock unavailable (%s); sweeping without it", exc)
            lock, acquired = None, True
        try:
            yield acquired
        finally:
            if lock is not None and acquired:
                with contextlib.suppress(Exception):
                    lock.release()

    def _sweep(self) -> dict[str, int]:
        stale, failed, back = self._recover_stale()
        for row in failed:
            announce_end(self.events, row, self.after_finish)
        todo = self._lost_queued(back)
        sent = 0
        for queue, job_ids in todo.items():
            sent += enqueue_jobs(self.celery, self.sessions, job_ids, queue=queue)
        if stale or todo:
            logger.warning("reaper: %d stale running (%d failed for good), %d re-enqueued: %s",
                           stale, len(failed), sent,
                           ", ".join(j for ids in todo.values() for j in ids)[:2000])
        imports = self._resend_imports()
        retire_versions(self.settings, self.sessions)
        remove_abandoned_uploads(self.settings.data_dir)
        return {"stale": stale, "failed": len(failed), "requeued": sent, "imports": imports}

    # -- dataset imports whose worker died or whose message was lost --------------------

    def _resend_imports(self) -> int:
        """Send again the imports whose builder died (heartbeat stale) at once, and those
        never claimed (unsent, or their message lost) when the broker holds fewer
        messages than there are such imports; returns how many were sent."""
        now = utcnow()
        stale = now - dt.timedelta(seconds=self.settings.stale_after_s)
        unsent = now - dt.timedelta(seconds=self.settings.requeue_queued_after_s)
        building = Dataset.building_version.is_not(None) & Dataset.deleted_at.is_(None)
        send: list[tuple[str, int]] = []
        with self.sessions.begin() as s:
            orphans = s.execute(select(Dataset.id, Dataset.building_version)
                                .where(building, Dataset.heartbeat_at < stale)
                                .limit(100)).all()
            for dataset_id, version in orphans:
                if dataset_state.REQUEUE.apply(s, dataset_id=dataset_id, of_version=version,
                                               stale_before=stale, now=now,
                                               max_attempts=self.settings.max_attempts):
                    logger.warning("reaper: dataset %s lost its builder of version %s; re-sent",
                                   dataset_id, version)
                    send.append((dataset_id, version))
            unclaimed = s.scalar(select(func.count()).where(
                building, Dataset.heartbeat_at.is_(None))) - len(send)
            waiting = s.execute(select(Dataset.id, Dataset.building_version).where(
                building, Dataset.heartbeat_at.is_(None), Dataset.updated_at < unsent)
                .order_by(Dataset.updated_at).limit(100)).all()
            held = self._messages_held(DATASETS_QUEUE) if waiting else None
            if waiting and held is not None and held < unclaimed:
                for dataset_id, version in waiting[:unclaimed - held]:
                    dataset_state.RESENT.apply(s, dataset_id=dataset_id, of_version=version,
                                               now=now)
                    logger.warning("reaper: dataset %s import of version %s never reached a "
                                   "worker; re-sent", dataset_id, version)
                    send.append((dataset_id, version))
        resent = {dataset_id for dataset_id, _ in send}
        for dataset_id, version in orphans:  # the rest have had all their attempts
            if dataset_id not in resent:
                give_up(self.settings, self.sessions, self.dataset_events, dataset_id, version)
        return sum(send_import(self.celery, dataset_id, version) for dataset_id, version in send)

    @property
    def dataset_events(self) -> EventLog:
        return EventLog(redis_for(self.settings.redis_url), maxlen=self.settings.events_maxlen,
                        ttl_s=self.settings.events_ttl_s, kind="dataset")

    # -- running jobs whose worker died ---------------------------------------------

    def _recover_stale(self) -> tuple[int, list[Job], list[str]]:
        now = utcnow()
        cutoff = now - dt.timedelta(seconds=self.settings.stale_after_s)
        failed: list[Job] = []
        back: list[str] = []
        with self.sessions.begin() as s:
            dead = s.execute(select(Job.id, Job.attempt).where(
                Job.status == "running", Job.heartbeat_at < cutoff).limit(1000)).all()
            for job_id, attempt in dead:
                exhausted = attempt >= self.settings.max_attempts
                guard = {"job_id": job_id, "of_attempt": attempt, "stale_before": cutoff}
                changed = (job_state.GIVE_UP.apply(
                    s, **guard, now=now, why="The worker running this job stopped "
                    f"responding {attempt} times; giving up.")
                    if exhausted else job_state.REQUEUE.apply(s, **guard))
                if changed and exhausted:
                    job = s.get(Job, job_id)
                    record_job(s.connection(), job, "failed", at=now)
                    failed.append(job)
                    logger.error("job %s failed for good: worker lost %d times", job_id, attempt)
                elif changed:
                    back.append(job_id)
                    logger.warning("job %s: worker lost during attempt %d; re-queued",
                                   job_id, attempt)
        return len(dead), failed, back

    # -- queued jobs without a message ------------------------------------------------

    def _lost_queued(self, back: list[str]) -> dict[str, list[str]]:
        """Job ids to send, by queue: re-queued, never sent, and lost by the broker."""
        now = utcnow()
        never_sent = now - dt.timedelta(seconds=NEVER_SENT_GRACE_S)
        old = now - dt.timedelta(seconds=self.settings.requeue_queued_after_s)
        todo: dict[str, list[str]] = {}
        with self.sessions() as s:
            for job_id, queue in s.execute(select(Job.id, Job.queue).where(
                    Job.status == "queued",
                    (Job.id.in_(back)) | (Job.enqueued_at.is_(None) & (Job.created_at < never_sent)),
            ).order_by(Job.created_at).limit(1000)):
                todo.setdefault(queue, []).append(job_id)
            # Sent and not yet claimed: each should have its message in the broker. Held
            # batch jobs have none until released, so they are not counted.
            waiting = dict(s.execute(select(Job.queue, func.count()).where(
                Job.status == "queued", Job.enqueued_at.is_not(None),
                ~job_state.held_clause(Job)).group_by(Job.queue)).all())
            for queue, count in waiting.items():
                depth = self._messages_held(queue)
                if depth is None or depth >= count:
                    continue
                # Fewer messages than waiting jobs: the oldest messages were lost.
                todo.setdefault(queue, []).extend(s.scalars(select(Job.id).where(
                    Job.status == "queued", Job.queue == queue, Job.enqueued_at < old)
                    .order_by(Job.enqueued_at).limit(min(count - depth, 1000))).all())
        return todo

    def _messages_held(self, queue: str) -> int | None:
        """Messages the broker holds for ``queue``: waiting in it, plus (Redis) those
        delivered from it and not yet acknowledged. None when the broker does not answer."""
        try:
            with self.celery.connection_for_write() as conn:
                conn.ensure_connection(max_retries=1)
                channel = conn.default_channel
                try:
                    waiting = channel.queue_declare(queue=queue, passive=True).message_count
                except ChannelError:  # no such key: the queue is empty
                    waiting = 0
                unacked_key = getattr(channel, "unacked_key", None)
                unacked = _unacked_from(channel.client, unacked_key, queue) if unacked_key else 0
                return waiting + unacked
        except Exception as exc:
            logger.warning("reaper: broker queue %s not readable (%s)", queue, exc)
            return None


def _unacked_from(client, key: str, queue: str) -> int:
    """Delivered, unacknowledged messages of ``queue`` in kombu's Redis ``unacked`` hash
    (each value is ``[message, exchange, routing_key]``; Celery routes a queue's tasks by
    its name). Other queues' messages do not count: 200 chats in flight must not hide a
    lost import. One that cannot be read counts, to err towards not re-sending."""
    held = 0
    for _tag, raw in client.hscan_iter(key, count=500):
        try:
            _message, exchange, routing_key = json.loads(raw)
        except (ValueError, TypeError):
            held += 1
            continue
        held += queue in (routing_key, exchange)
    return held
