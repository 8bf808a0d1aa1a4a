"""One question's turn: the messages, the tools and the round step every driver shares.

A ``Turn`` holds what answering one question accumulates -- the message list, the
job's tools, its usage figures and what the model has seen -- and takes the model's
replies one at a time (:meth:`Turn.take`), whoever made the call: the streaming loop
(``worker/agent/loop.py``) or economy mode's Message Batches (``worker/batches/message_batches.py``).

The message list is never persisted: later turns see only the final answer text,
never this turn's tool trace or thinking. Within the job, thinking blocks are
replayed exactly as received. ``round_no`` numbers the job's model calls from 0.
"""
from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from decimal import Decimal
from typing import Any, Protocol

from engine.sql.sandbox import SqlSandbox
from shared import tracing
from shared.config import Settings
from shared.errors import JobCancelled, JobFailure
from shared.usage_figures import CallUsage, JobFigures, price_call
from worker.agent.stop_reasons import (
    Next,
    answer_text,
    as_params,
    empty_answer,
    next_step,
    thinking_texts,
    with_continuation,
)
from worker.agent.system_prompt import system_blocks
from worker.agent.verified_queries import VerifiedContext
from worker.answer.charts import bind_charts
from worker.answer.data_years import data_years
from worker.answer.extraction import ExtractedAnswer, extract_answer, truncated_answer
from worker.answer.number_check import Evidence, check_numbers
from worker.llm.request import request_params, with_breakpoint
from worker.tools import ToolBox, ToolContext, ToolRun, definitions

logger = logging.getLogger(__name__)

EPHEMERAL = {"type": "ephemeral"}


class LoopHooks(Protocol):
    """What a turn reports while it works; the runner persists and publishes it."""

    def on_llm_call(self, round_no: int, usage: CallUsage, stop_reason: str | None, ms: int) -> None: ...
    def on_llm_retry(self, round_no: int, error_type: str) -> None: ...
    def on_thinking(self, round_no: int, text: str) -> None: ...
    def on_tool_call(self, round_no: int, run: ToolRun) -> None: ...
    def on_answer_delta(self, text: str) -> None: ...
    # The events of one read of the model's stream are in: send what they produced, when
    # due, with the answer text so far (``publish_answer()`` publishes it, if it grew).
    def on_stream_read(self, publish_answer: Callable[[], None]) -> None: ...
    def cancel_requested(self) -> bool: ...


class SilentHooks:
    """Hooks that record nothing: for callers that only want the outcome (bench, doctor)."""

    def on_llm_call(self, round_no: int, usage: CallUsage, stop_reason: str | None,
                    ms: int) -> None: ...
    def on_llm_retry(self, round_no: int, error_type: str) -> None: ...
    def on_thinking(self, round_no: int, text: str) -> None: ...
    def on_tool_call(self, round_no: int, run: ToolRun) -> None: ...
    def on_answer_delta(self, text: str) -> None: ...
    def on_stream_read(self, publish_answer: Callable[[], None]) -> None: ...

    def cancel_requested(self) -> bool:
        return False


@dataclasses.dataclass
class LoopOutcome:
    answer_text: str
    charts: list[dict]
    parse_path: str
    truncated: bool
    stats: JobFigures
    warnings: list[str]
    # The faithfulness check of answer_text: {"checked": n, "unsupported": [...]}.
    numbers: dict | None = None
    # {"verified_query_id", "question"} when the answer relied on a verified query.
    verified: dict | None = None
    # {"question", "options"} when the model asked instead of answering.
    clarification: dict | None = None


class Turn:
    """One job's turn. ``cache_control`` marks the system prompt and the newest message
    as prompt-cache breakpoints (economy mode asks for 1-hour entries)."""

    def __init__(self, *, sandbox: SqlSandbox, settings: Settings, system_prompt: str,
                 hooks: LoopHooks, model: str, deadline: float, clock: Callable[[], float],
                 cache_control: dict = EPHEMERAL, verified: VerifiedContext | None = None):
        self.settings = settings
        self.verified = verified or VerifiedContext()
        self.model = model
        self.hooks = hooks
        self.deadline = deadline
        self.clock = clock
        self.cache_control = cache_control
        self.system = system_blocks(system_prompt, cache_control)
        if not settings.system_cache:  # the benchmarks' uncached baseline only
            self.system = [{"type": "text", "text": system_prompt}]
        self.figures = JobFigures()
        # What the model has seen, for the faithfulness check of its answer.
        self.evidence = Evidence()
        self.evidence.add_years(data_years(sandbox))
        self.tools = ToolBox(ToolContext(sandbox, settings, self.figures, self.evidence,
                                         self.time_left))
        self.messages: list[dict] = []
        self.round_no = 0
        self._asked_to_continue = False

    def start(self, history: list[dict], question: str) -> None:
        """Begin with ``history`` (role + text turns, oldest first) and the question; the
        figures in both count as seen by the model."""
        for message in [*history, {"content": question}]:
            if isinstance(message["content"], str):
                self.evidence.add_context(message["content"])
        # Retrieved verified queries go in the turn, after the cached system prompt.
        self.messages = [*history, {"role": "user", "content": self.verified.turn_text(question)}]

    def time_left(self) -> float:
        return self.deadline - self.clock()

    def check_boundary(self) -> None:
        """Before each model call: raise JobCancelled if a cancel was asked for, or
        JobFailure ``deadline_exceeded`` once the job's time is spent."""
        # Round 0 follows the claim, which only succeeds for a job nobody cancelled:
        # asking the database again there would cost a query per job for nothing.
        if self.round_no > 0 and self.hooks.cancel_requested():
            raise JobCancelled()
        if self.time_left() <= 0:
            raise JobFailure(
                "deadline_exceeded",
                f"The job ran out of its {self.settings.job_deadline_s:g} s time budget "
                f"after {self.round_no} rounds.",
            )

    def request(self) -> dict:
        """The next request's arguments: model rules applied, newest message a breakpoint."""
        messages = self.messages
        if self.settings.cache_messages:
            messages = with_breakpoint(messages, self.cache_control)
        return request_params(self.settings, self.model, system=self.system,
                              tools=definitions(), messages=messages)

    def take(self, message: Any, ms: int, *, discount: Decimal = Decimal(1),
             thinking_shown: bool = False) -> LoopOutcome | None:
        """The round step: count the reply (``ms`` long, its cost times ``discount``),
        announce its thinking unless the driver showed it as it streamed, then do what
        its stop reason says (``worker/agent/stop_reasons``). Returns the outcome once the turn
        is over, else None (the next request is ready).

        Raises JobFailure for the round limit, a refusal, a second empty reply or an
        unknown stop reason.
        """
        self._account(message, ms, discount)
        if not thinking_shown:
            for text in thinking_texts(message.content):
                self.hooks.on_thinking(self.round_no, text)
        step = next_step(message)
        if step is Next.TRUNCATED:
            return self._finish(truncated_answer())
        if step is Next.ANSWER:
            answer = extract_answer(answer_text(message))
            if answer.answer_text.strip():
                return self._finish(answer)
            step = Next.EMPTY  # {"answerText": ""} is no answer either
        self.round_no += 1
        if step is Next.EMPTY:
            if self._asked_to_continue:
                raise empty_answer()
            self._asked_to_continue = True
            logger.warning("the model ended its turn without an answer; asking it to continue")
            self.messages = with_continuation(self.messages)
            return None
        if step is Next.RUN_TOOLS and self.figures.tool_rounds >= self.settings.max_tool_rounds:
            raise JobFailure(
                "tool_round_limit",
                f"The question needed more than {self.settings.max_tool_rounds} "
                "rounds of queries; try a narrower question.",
            )
        content = as_params(message.content)
        if content:
            self.messages.append({"role": "assistant", "content": content})
        if step is Next.RUN_TOOLS:
            self.figures.tool_rounds += 1
            self.messages.append({"role": "user", "content": self._run_tools(message)})
        return None

    def _account(self, message: Any, ms: int, discount: Decimal) -> None:
        # Thinking tokens are in output_tokens.
        usage = price_call(message.usage, self.settings.price_for(self.model),
                           discount=discount)
        self.figures.usage += usage
        self.figures.llm_calls += 1
        self.figures.llm_ms += ms
        self.hooks.on_llm_call(self.round_no, usage, message.stop_reason, ms)

    def _run_tools(self, message: Any) -> list[dict]:
        results = []
        for block in message.content:
            if block.type != "tool_use":
                continue
            with tracing.execute_tool(block.name, block.id) as span:
                run = self.tools.call(block.name, block.input)
                tracing.record_tool(span, run)
            self.hooks.on_tool_call(self.round_no, run)
            results.append({"type": "tool_result", "tool_use_id": block.id, "content": run.text,
                            **({"is_error": True} if run.is_error else {})})
        return results

    def _finish(self, answer: ExtractedAnswer) -> LoopOutcome:
        bound = bind_charts(answer.charts, self.tools.chart_sources(), answer.answer_text)
        return LoopOutcome(
            answer_text=bound.answer_text,
            charts=bound.charts,
            parse_path=answer.parse_path,
            truncated=answer.parse_path == "truncated",
            stats=self.figures,
            warnings=bound.warnings,
            numbers=self._check_numbers(bound.answer_text),
            verified=self.verified.relied_on(self._relied_on_sql(bound.charts)),
            clarification=answer.clarify,
        )

    def _relied_on_sql(self, charts: list[dict]) -> str | None:
        """The query the answer relied on: its first chart's, else the last that ran
        (the eval's rule)."""
        if charts:
            return charts[0].get("sql")
        results = self.tools.chart_sources()
        return results[max(results)].sql if results else None

    def _check_numbers(self, answer_text: str) -> dict | None:
        """The faithfulness check of the answer; None (logged) if the check itself fails:
        a bug in a check must never cost the user an answer."""
        try:
            return check_numbers(answer_text, self.evidence)
        except Exception:
            logger.exception("the numbers check of an answer failed; answer kept without it")
            return None
