"""Economy mode: a batch's questions answered through the Message Batches API at half price.

Each round, the next request of every question still open goes out as ONE message
batch; when it has ended, every result is handled exactly as the agent loop
handles a streamed reply (tools run, answers extracted, charts bound), and the
questions that asked for tools go out again in the next batch, until every
question has its answer. The system prompt and each conversation's newest
message carry 1-hour cache breakpoints: a batch can take minutes to hours, far
longer than the default 5-minute cache lives, and the 1-hour entries survive
from one round to the next.

The driver claims its jobs (``running``) and keeps their heartbeats fresh while it
waits. If it dies, the reaper sees stale heartbeats and hands the jobs to ordinary
workers: the answers come at the normal price, but they come.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import anthropic

from shared import batches as batch_rows
from shared.claude_models import BATCH_DISCOUNT
from shared.errors import JobCancelled, JobFailure
from shared.models import Batch
from worker.agent_loop import AgentLoop, LoopOutcome
from worker.history import load_history
from worker.job_store import ClaimedJob, JobEnding
from worker.llm_errors import RETRYABLE_STREAM_ERRORS, batch_failure, failure_for
from worker.runner import JobRunner
from worker.stop_reasons import thinking_texts

logger = logging.getLogger(__name__)

ONE_HOUR = {"type": "ephemeral", "ttl": "1h"}
FIRST_POLL_S = 0.2
TRANSIENT_RETRIES = 2


class _BatchedLoop(AgentLoop):
    """The agent loop of one question with its LLM call taken out: the driver makes it.

    ``absorb`` takes one reply and does what ``AgentLoop.run`` does with a streamed
    one (``AgentLoop.advance``: the same stop reasons, SQL cache, query ids, round
    limit, thinking replay and chart binding); ``request`` is the same request the
    streaming loop sends, with 1-hour cache breakpoints.
    """

    def __init__(self, job: ClaimedJob, history: list[dict], **kw):
        super().__init__(**kw)
        # 1-hour breakpoints: the system prompt must outlive the wait for each batch.
        self.system = [{**block, "cache_control": ONE_HOUR} for block in self.system]
        self.job = job
        self.start(history, job.message)
        self.retries = 0
        self.started = time.perf_counter()

    def request(self, cache_control: dict | None = None) -> dict:
        return super().request(ONE_HOUR)

    def absorb(self, message, ms: int) -> LoopOutcome | None:
        """Account for ``message``; returns the outcome once the question is answered.

        Raises JobFailure like the agent loop (round limit, refusal, empty answer...).
        """
        round_no = self.round_no
        self.account(message, ms, discount=BATCH_DISCOUNT)
        for text in thinking_texts(message.content):
            self.hooks.on_thinking(round_no, text)
        return self.advance(message)

    def check_boundary(self) -> None:
        self._check_boundary(self.round_no)


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
        prompt = self.runner.system_prompt()
        open_loops = [loop for job_id in job_ids if (loop := self._start(job_id, prompt))]
        logger.info("batch %s: economy mode with %d questions", batch_id, len(open_loops))
        claimed = [loop.job.id for loop in open_loops]
        try:
            while open_loops:
                open_loops = self._round(batch_id, open_loops)
        finally:
            for job_id in claimed:
                self.runner.heartbeats.remove(job_id)
        return len(claimed)

    def _start(self, job_id: str, prompt: str) -> _BatchedLoop | None:
        job = self.runner.store.claim(job_id)
        if job is None:
            return None
        self.runner.heartbeats.add(job.id, job.attempt)
        with self.runner.store.sessions() as s:
            history = load_history(s, job.conversation_id, exclude_job_id=job.id,
                                   max_turns=self.settings.history_turns,
                                   token_budget=self.settings.history_token_budget)
        loop = _BatchedLoop(job, history, client=self.runner.client, sandbox=self.runner.sandbox,
                            settings=self.settings, system_prompt=prompt, model=job.model,
                            hooks=self.runner.hooks_for(job), deadline=self.deadline,
                            clock=self.clock)
        self.runner.events.publish(job.id, "started", {"attempt": job.attempt, "mode": "economy"})
        return loop

    def _round(self, batch_id: str, loops: list[_BatchedLoop]) -> list[_BatchedLoop]:
        """Send one message batch for ``loops``; returns the questions still open after it."""
        ready = []
        for loop in loops:
            try:
                loop.check_boundary()
                ready.append(loop)
            except (JobCancelled, JobFailure) as exc:
                self._end(loop, exc)
        if not ready:
            return []
        try:
            started = time.perf_counter()
            results = self._send_and_wait(batch_id, ready)
            ms = int((time.perf_counter() - started) * 1000)
        except JobFailure as exc:
            for loop in ready:
                self._end(loop, exc)
            return []
        still_open = []
        for loop in ready:
            if self._handle(loop, results.get(loop.job.id), ms):
                still_open.append(loop)
        return still_open

    def _send_and_wait(self, batch_id: str, loops: list[_BatchedLoop]) -> dict[str, Any]:
        client = self.runner.client
        try:
            created = client.messages.batches.create(requests=[
                {"custom_id": loop.job.id, "params": loop.request()} for loop in loops])
            logger.info("batch %s: message batch %s sent with %d requests", batch_id,
                        created.id, len(loops))
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
            raise failure_for(exc, model=loops[0].model,
                              retries=client.max_retries) from exc

    def _handle(self, loop: _BatchedLoop, result, ms: int) -> bool:
        """Take one question's result; True while the question stays open."""
        try:
            if result is None or result.type == "errored":
                return self._retry(loop, result)
            if result.type != "succeeded":
                raise JobFailure("llm_batch_" + result.type,
                                 f"The Message Batch ended without answering ({result.type}).")
            outcome = loop.absorb(result.message, ms)
        except Exception as exc:
            self._end(loop, exc)
            return False
        if outcome is None:
            return True
        self.runner.complete(loop.job, JobEnding.answered(outcome), loop.stats, loop.started)
        return False

    def _retry(self, loop: _BatchedLoop, result) -> bool:
        error = result.error.error if result is not None else None
        kind = getattr(error, "type", "missing_result")
        message = getattr(error, "message", "no result came back for this request")
        if kind not in RETRYABLE_STREAM_ERRORS and kind != "missing_result":
            raise batch_failure(kind, message, model=loop.model)
        loop.retries += 1
        if loop.retries > TRANSIENT_RETRIES:
            raise JobFailure("llm_unavailable", f"The request failed {loop.retries} times in "
                             f"message batches ({kind}: {message}).")
        logger.warning("job %s: batch request failed (%s); retrying next round", loop.job.id, kind)
        return True

    def _end(self, loop: _BatchedLoop, exc: Exception) -> None:
        self.runner.complete(loop.job, self.runner.stopped(loop.job, exc), loop.stats,
                             loop.started)
