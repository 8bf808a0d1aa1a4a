"""The Claude tool-use loop: one user turn, any number of SQL rounds, one JSON answer.

The message list lives on one ``AgentLoop`` (one job) and is never persisted: later
turns see only the final answer text, never this turn's tool trace or thinking.
Within the job, thinking blocks are replayed exactly as received.
"""
from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable
from decimal import Decimal
from typing import Protocol

import anthropic

from shared.config import Settings
from shared.errors import JobCancelled, JobFailure
from shared.usage_figures import CallUsage, JobFigures, price_call
from worker.answer_stream import AnswerStreamer
from worker.charts import bind_charts
from worker.data_years import data_years
from worker.extract_answer import ExtractedAnswer, extract_answer, truncated_answer
from worker.llm_request import request_params, with_breakpoint
from worker.llm_stream import stream_message
from worker.number_check import Evidence, check_numbers
from worker.sql_sandbox import QueryResult, SqlSandbox
from worker.stop_reasons import (
    Next,
    answer_text,
    as_params,
    empty_answer,
    next_step,
    with_continuation,
)
from worker.system_prompt import EXECUTE_SQL_TOOL, system_blocks
from worker.tool_result import text_for_model

logger = logging.getLogger(__name__)


class LoopHooks(Protocol):
    """What the loop reports while it works; the runner persists and publishes it."""

    def on_llm_call(self, round_no: int, usage: CallUsage, stop_reason: str | None, ms: int) -> None: ...
    def on_llm_retry(self, round_no: int, error_type: str) -> None: ...
    def on_thinking(self, round_no: int, text: str) -> None: ...
    def on_tool_call(self, round_no: int, result: QueryResult, cached: bool) -> None: ...
    def on_answer_delta(self, text: str) -> None: ...
    def cancel_requested(self) -> bool: ...


class SilentHooks:
    """Hooks that record nothing: for callers that only want the outcome (bench, doctor)."""

    def on_llm_call(self, round_no: int, usage: CallUsage, stop_reason: str | None,
                    ms: int) -> None: ...
    def on_llm_retry(self, round_no: int, error_type: str) -> None: ...
    def on_thinking(self, round_no: int, text: str) -> None: ...
    def on_tool_call(self, round_no: int, result: QueryResult, cached: bool) -> None: ...
    def on_answer_delta(self, text: str) -> None: ...

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


class AgentLoop:
    """Runs one turn. Build one per job; it keeps the job's messages, SQL cache and
    statistics. ``round_no`` numbers the LLM calls of the job from 0."""

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
    ):
        self.client = client
        self.sandbox = sandbox
        self.settings = settings
        self.model = model or settings.model
        self.system = system_blocks(system_prompt)
        if not settings.system_cache:  # the benchmarks' uncached baseline only
            self.system = [{"type": "text", "text": system_prompt}]
        self.hooks = hooks
        self.clock = clock
        self.deadline = deadline if deadline is not None else clock() + settings.job_deadline_s
        self.stats = JobFigures()
        self.messages: list[dict] = []
        self.round_no = 0
        self._asked_to_continue = False
        self._sql_cache: dict[str, QueryResult] = {}
        self._results: dict[int, QueryResult] = {}
        self._next_query_id = 1
        # What the model has seen, for the faithfulness check of its answer.
        self._evidence = Evidence()
        self._evidence.add_years(data_years(sandbox))

    def run(self, history: list[dict], question: str) -> LoopOutcome:
        """Answer ``question`` after ``history`` (role + text turns, oldest first).

        Raises JobFailure (with a stable code) or JobCancelled; ``self.stats`` keeps the
        partial figures either way.
        """
        self.start(history, question)
        while True:
            self._check_boundary(self.round_no)
            outcome = self.advance(self._call())
            if outcome is not None:
                return outcome

    def start(self, history: list[dict], question: str) -> None:
        self.messages = [*history, {"role": "user", "content": question}]
        self.note_context(self.messages)

    def note_context(self, messages: list[dict]) -> None:
        """Figures in the question and earlier turns count as seen by the model."""
        for message in messages:
            if isinstance(message["content"], str):
                self._evidence.add_context(message["content"])

    def request(self, cache_control: dict | None = None) -> dict:
        """The next request's arguments: model rules applied, newest message a breakpoint."""
        messages = self.messages
        if self.settings.cache_messages:
            messages = with_breakpoint(messages, cache_control or {"type": "ephemeral"})
        return request_params(self.settings, self.model, system=self.system,
                              tools=[EXECUTE_SQL_TOOL], messages=messages)

    def advance(self, message) -> LoopOutcome | None:
        """Take one reply (see ``worker/stop_reasons``); the outcome once the turn is over.

        Raises JobFailure for the round limit, a refusal, a second empty reply or an
        unknown stop reason.
        """
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
        if step is Next.RUN_TOOLS and self.stats.tool_rounds >= self.settings.max_tool_rounds:
            raise JobFailure(
                "tool_round_limit",
                f"The question needed more than {self.settings.max_tool_rounds} "
                "rounds of queries; try a narrower question.",
            )
        content = as_params(message.content)
        if content:
            self.messages.append({"role": "assistant", "content": content})
        if step is Next.RUN_TOOLS:
            self.stats.tool_rounds += 1
            self.messages.append({"role": "user", "content": self._run_tools(message,
                                                                              self.round_no)})
        return None

    # -- one LLM call -------------------------------------------------------------

    def _call(self):
        round_no = self.round_no
        timeout = max(1.0, min(self.settings.llm_timeout_s, self.deadline - self.clock()))
        started = time.perf_counter()
        streamer = [AnswerStreamer(self.hooks.on_answer_delta)]

        def on_event(event) -> None:
            if event.type == "text":
                streamer[0].feed(event.text)
            elif event.type == "content_block_stop":
                block = event.content_block
                if block.type == "thinking" and block.thinking.strip():
                    self.hooks.on_thinking(round_no, block.thinking)
                streamer[0].flush()

        def on_retry(_attempt: int, kind: str) -> None:
            self.stats.llm_retries += 1
            self.hooks.on_llm_retry(round_no, kind)
            streamer[0] = AnswerStreamer(self.hooks.on_answer_delta)  # the reply restarts

        result = stream_message(self.client, self.request(), timeout=timeout,
                                on_event=on_event, on_retry=on_retry)
        self.account(result.message, int((time.perf_counter() - started) * 1000))
        return result.message

    def account(self, message, ms: int, *, discount: Decimal = Decimal(1)) -> CallUsage:
        """Price and count one reply's usage (thinking tokens are in ``output_tokens``)."""
        usage = price_call(message.usage, self.settings.price_for(self.model),
                            discount=discount)
        self.stats.usage += usage
        self.stats.llm_calls += 1
        self.stats.llm_ms += ms
        self.hooks.on_llm_call(self.round_no, usage, message.stop_reason, ms)
        return usage

    # -- tools --------------------------------------------------------------------

    def _run_tools(self, message, round_no: int) -> list[dict]:
        results = []
        for block in message.content:
            if block.type != "tool_use":
                continue
            result = self._execute(block, round_no)
            text = text_for_model(result, self.settings.tool_result_format,
                                  self.settings.tool_result_max_rows)
            if not result.is_error:
                self._evidence.add_tool_result(text)
                self._evidence.add_sql(result.sql)
            results.append(
                {
                    "type": "tool_result",
                    "tool_use_id": block.id,
                    "content": text,
                    **({"is_error": True} if result.is_error else {}),
                }
            )
        return results

    def _execute(self, block, round_no: int) -> QueryResult:
        sql = block.input.get("sql") if isinstance(block.input, dict) else None
        if block.name != EXECUTE_SQL_TOOL["name"] or not isinstance(sql, str):
            result = QueryResult.failed(
                0, str(sql or ""), f"unknown tool {block.name!r} or missing 'sql' string input", 0.0
            )
            self.hooks.on_tool_call(round_no, result, False)
            return result
        key = sql.strip()
        cached = self._sql_cache.get(key)
        if cached is not None:
            self.stats.sql_cache_hits += 1
            self.hooks.on_tool_call(round_no, cached, True)
            return cached
        remaining = self.deadline - self.clock()
        result = self.sandbox.run(key, self._next_query_id, timeout_s=min(
            self.settings.sql_timeout_s, max(0.5, remaining)))
        self.stats.sql_executed += 1
        self.stats.sql_ms += int(result.ms)
        if not result.is_error:
            self._results[result.query_id] = result
            self._next_query_id += 1
        self._sql_cache[key] = result
        self.hooks.on_tool_call(round_no, result, False)
        return result

    # -- boundaries and the end -----------------------------------------------------

    def _check_boundary(self, round_no: int) -> None:
        # Round 0 follows the claim, which only succeeds for a job nobody cancelled:
        # asking the database again there would cost a query per job for nothing.
        if round_no > 0 and self.hooks.cancel_requested():
            raise JobCancelled()
        if self.clock() >= self.deadline:
            raise JobFailure(
                "deadline_exceeded",
                f"The job ran out of its {self.settings.job_deadline_s:g} s time budget "
                f"after {round_no} rounds.",
            )

    def _finish(self, answer: ExtractedAnswer) -> LoopOutcome:
        bound = bind_charts(answer.charts, self._results, answer.answer_text)
        return LoopOutcome(
            answer_text=bound.answer_text,
            charts=bound.charts,
            parse_path=answer.parse_path,
            truncated=answer.parse_path == "truncated",
            stats=self.stats,
            warnings=bound.warnings,
            numbers=self._check_numbers(bound.answer_text),
        )

    def _check_numbers(self, answer_text: str) -> dict | None:
        """The faithfulness check of the answer; None (logged) if the check itself fails:
        a bug in a check must never cost the user an answer."""
        try:
            return check_numbers(answer_text, self._evidence)
        except Exception:
            logger.exception("the numbers check of an answer failed; answer kept without it")
            return None
