"""Economy mode: a batch's questions answered through the Message Batches API at half price.

Each round, the next request of every question still open goes out as ONE message
batch; when it has ended, every result goes through the same round step as a
streamed reply (``worker/agent/turn.py``: tools run, answers extracted, charts bound), and
the questions that asked for tools go out again in the next batch, until every
question has its answer. The system prompt and each conversation's newest
message carry 1-hour cache breakpoints: a batch can take minutes to hours, far
longer than the default 5-minute cache lives, and the 1-hour entries survive
from one round to the next.

The driver claims its jobs (``running``) and keeps their heartbeats fresh while it
waits. If it dies, the reaper sees stale heartbeats and hands the jobs to ordinary
workers: the answers come at the normal price, but they come.
"""
from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable
from typing import Any

import anthropic

from shared import batch_rows
from shared.claude_models import BATCH_DISCOUNT
from shared.errors import JobFailure
from shared.models import Batch
from shared.usage_figures import JobFigures
from worker.agent.turn import Turn
from worker.jobs.hooks import JobHooks
from worker.jobs.runner import JobRunner
from worker.jobs.store import ClaimedJob, JobEnding
from worker.llm.errors import RETRYABLE_STREAM_ERRORS, batch_failure, failure_for

logger = logging.getLogger(__name__)

ONE_HOUR = {"type": "ephemeral", "ttl": "1h"}
FIRST_POLL_S = 0.2
TRANSIENT_RETRIES = 2


@dataclasses.dataclass
class _Question:
    """One claimed question of the batch, its turn, and the hooks that hold the rows its
    final write stores."""

    job: ClaimedJob
    turn: Turn
    started: float
    hooks: JobHooks
    data: Any = None  # JobData
    retries: int = 0


class EconomyBatch:
    """Drives the held questions of one economy batch to their answers."""

    def __init__(self, runner: JobRunner, *, sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic):
        self.runner = runner
        self.settings = runner.settings
        self.sleep = sleep
        self.clock = clock
        self.deadline = 0.0  # set when a run starts

    def run(self, batch_id: str) -> int:
        """Answer every question of ``batch_id`` this driver can claim; returns how many."""
        with self.runner.store.sessions() as s:
            batch = s.get(Batch, batch_id)
            if batch is None or batch.mode != "economy" or batch.status != "running":
                return 0
            job_ids = batch_rows.held_job_ids(s, batch_id)
        self.deadline = self.clock() + self.settings.economy_max_wait_s
        questions = [q for job_id in job_ids if (q := self._start(job_id))]
        logger.info("batch %s: economy mode with %d questions", batch_id, len(questions))
        claimed = [q.job.id for q in questions]
        try:
            while questions:
                questions = self._round(batch_id, questions)
        finally:
            for job_id in claimed:
                self.runner.heartbeats.remove(job_id)
        return len(claimed)

    def _start(self, job_id: str) -> _Question | None:
        job = self.runner.store.claim(job_id)
        if job is None:
            return None
        self.runner.heartbeats.add(job.id, job.attempt)
        started = time.perf_counter()
        hooks = self.runner.hooks_for(job)
        try:
            data = self.runner.data.for_job(job)
            # 1-hour breakpoints: the prompt must outlive the wait for each batch.
            turn = Turn(sandbox=data.sandbox, settings=self.settings,
                        system_prompt=data.system_prompt, hooks=hooks,
                        model=job.model, deadline=self.deadline, clock=self.clock,
                        cache_control=ONE_HOUR)
            turn.start(self.runner.history(job), job.message)
        except Exception as exc:
            self.runner.heartbeats.remove(job.id)
            self.runner.complete(job, self.runner.stopped(job, exc), JobFigures(), started)
            return None
        self.runner.events.publish(job.id, "started", {"attempt": job.attempt, "mode": "economy"})
        return _Question(job, turn, started, hooks, data)

    def _round(self, batch_id: str, questions: list[_Question]) -> list[_Question]:
        """Send one message batch for ``questions``; returns those still open after it."""
        ready = []
        for question in questions:
            try:
                question.turn.check_boundary()
                ready.append(question)
            except Exception as exc:
                self._end(question, exc)
        if not ready:
            return []
        try:
            started = time.perf_counter()
            results = self._send_and_wait(batch_id, ready)
            ms = int((time.perf_counter() - started) * 1000)
        except JobFailure as exc:
            for question in ready:
                self._end(question, exc)
            return []
        return [q for q in ready if self._handle(q, results.get(q.job.id), ms)]

    def _send_and_wait(self, batch_id: str, questions: list[_Question]) -> dict[str, Any]:
        client = self.runner.client
        try:
            created = client.messages.batches.create(requests=[
                {"custom_id": q.job.id, "params": q.turn.request()} for q in questions])
            logger.info("batch %s: message batch %s sent with %d requests", batch_id,
                        created.id, len(questions))
            pause = FIRST_POLL_S
            while created.processing_status != "ended":
                if self.clock() >= self.deadline:
                    client.messages.batches.cancel(created.id)
                    raise JobFailure("deadline_exceeded",
                                     "The Message Batch did not end within the time allowed.")
                self.sleep(pause)
                pause = min(pause * 1.6, self.settings.economy_poll_max_s)
                created = client.messages.batches.retrieve(created.id)
            return {r.custom_id: r.result for r in client.messages.batches.results(created.id)}
        except anthropic.APIError as exc:
            raise failure_for(exc, model=questions[0].job.model,
                              retries=client.max_retries) from exc

    def _handle(self, question: _Question, result, ms: int) -> bool:
        """Take one question's result; True while the question stays open."""
        try:
            if result is None or result.type == "errored":
                return self._retry(question, result)
            if result.type != "succeeded":
                raise JobFailure("llm_batch_" + result.type,
                                 f"The Message Batch ended without answering ({result.type}).")
            outcome = question.turn.take(result.message, ms, discount=BATCH_DISCOUNT)
        except Exception as exc:
            self._end(question, exc)
            return False
        if outcome is None:
            return True
        ending = JobEnding.answered(outcome)
        ending.data_as_of = question.data.data_as_of()
        self.runner.complete(question.job, ending, question.turn.figures, question.started,
                             question.hooks.trace)
        return False

    def _retry(self, question: _Question, result) -> bool:
        error = result.error.error if result is not None else None
        kind = getattr(error, "type", "missing_result")
        message = getattr(error, "message", "no result came back for this request")
        if kind not in RETRYABLE_STREAM_ERRORS and kind != "missing_result":
            raise batch_failure(kind, message, model=question.job.model)
        question.retries += 1
        if question.retries > TRANSIENT_RETRIES:
            raise JobFailure("llm_unavailable", f"The request failed {question.retries} times "
                             f"in message batches ({kind}: {message}).")
        logger.warning("job %s: batch request failed (%s); retrying next round",
                       question.job.id, kind)
        return True

    def _end(self, question: _Question, exc: Exception) -> None:
        ending = self.runner.stopped(question.job, exc)
        ending.data_as_of = question.data.data_as_of()
        self.runner.complete(question.job, ending, question.turn.figures, question.started,
                             question.hooks.trace)
