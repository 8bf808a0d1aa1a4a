"""The streaming driver: one user turn, any number of tool rounds, one JSON answer.

Each round it checks the boundary (cancel, deadline), streams one Messages API call
-- passing thinking summaries to subscribers as each block ends and the answer text
as it is written (read whenever the job's events are due to leave, and once the reply
is complete) -- and hands the reply to the turn's round step (``worker/agent/turn.py``),
until the turn has its outcome.
"""
from __future__ import annotations

import time
from collections.abc import Callable

import anthropic

from engine.sql.sandbox import SqlSandbox
from shared import tracing
from shared.config import Settings
from shared.usage_figures import JobFigures, price_call
from worker.agent.answer_stream import AnswerStreamer
from worker.agent.turn import LoopHooks, LoopOutcome, Turn
from worker.agent.verified_queries import VerifiedContext
from worker.llm.stream import stream_message


class AgentLoop:
    """Runs one turn with streamed calls. Build one per job."""

    def __init__(
        self,
        *,
        client: anthropic.Anthropic,
        sandbox: SqlSandbox,
        settings: Settings,
        system_prompt: str,
        hooks: LoopHooks,
        model: str | None = None,
        deadline: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        verified: VerifiedContext | None = None,
    ):
        self.client = client
        self.settings = settings
        self.hooks = hooks
        self.turn = Turn(
            sandbox=sandbox, settings=settings, system_prompt=system_prompt, hooks=hooks,
            model=model or settings.model, clock=clock, verified=verified,
            deadline=deadline if deadline is not None else clock() + settings.job_deadline_s)

    @property
    def stats(self) -> JobFigures:
        """The turn's figures so far (partial when the turn failed or was cancelled)."""
        return self.turn.figures

    def run(self, history: list[dict], question: str) -> LoopOutcome:
        """Answer ``question`` after ``history`` (role + text turns, oldest first).

        Raises JobFailure (with a stable code) or JobCancelled; ``self.stats`` keeps the
        partial figures either way.
        """
        self.turn.start(history, question)
        while True:
            self.turn.check_boundary()
            started = time.perf_counter()
            with tracing.chat(self.turn.model) as span:
                message = self._stream()
                if span is not None:
                    tracing.record_reply(span, message, price_call(
                        message.usage, self.settings.price_for(self.turn.model)),
                        self.turn.model)
            outcome = self.turn.take(message, int((time.perf_counter() - started) * 1000),
                                     thinking_shown=True)
            if outcome is not None:
                return outcome

    def _stream(self):
        turn, round_no = self.turn, self.turn.round_no
        timeout = max(1.0, min(self.settings.llm_timeout_s, turn.time_left()))
        streamer = [AnswerStreamer(self.hooks.on_answer_delta)]

        def on_text(text: str) -> None:
            streamer[0].feed(text)

        def on_read() -> None:
            self.hooks.on_stream_read(streamer[0].flush)

        def on_block_end(block: dict) -> None:
            if block.get("type") == "thinking" and block["thinking"].strip():
                self.hooks.on_thinking(round_no, block["thinking"])

        def on_retry(_attempt: int, kind: str) -> None:
            turn.figures.llm_retries += 1
            self.hooks.on_llm_retry(round_no, kind)
            streamer[0] = AnswerStreamer(self.hooks.on_answer_delta)  # the reply restarts

        message = stream_message(self.client, turn.request(), timeout=timeout,
                                 on_text=on_text, on_block_end=on_block_end,
                                 on_read=on_read, on_retry=on_retry).message
        # The answer's last words: they travel with the round's next event.
        streamer[0].flush()
        return message
