"""``sunrise doctor``: is the model connection right, and what will a job cost?

With ``ANTHROPIC_API_KEY`` the checks run against Claude; with a base URL, against
that server; with neither (or ``--offline``) against an in-process offline model,
and the output says so. Each check is one row of a pass/fail table:

1. the key and the model id (``GET /v1/models/{id}``);
2. the model is in Sunrise's capability table, and how it will think (mode, effort);
3. one tiny tool round: the real agent loop, system prompt and SQL tool on the
   configured database, thinking replayed as in a job;
4. ``count_tokens`` of the real system prompt and tools against the model's cache
   minimum (below it, nothing is ever cached);
5. a second identical call reads the prefix from the prompt cache;
6. the expected cost of a job, from what the tool round really cost.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable
from typing import Any

import anthropic
from rich.console import Console
from rich.table import Table

from engine.sql.sandbox import SqlSandbox
from shared.claude_models import rules_for
from shared.config import Settings
from shared.errors import JobFailure
from sunrise.local import ensure_sample_db
from sunrise.offline import offline_model
from worker.agent.loop import AgentLoop
from worker.agent.system_prompt import build_system_prompt, system_blocks
from worker.agent.turn import LoopOutcome, SilentHooks
from worker.llm.client import OFFLINE_KEY, make_client
from worker.llm.errors import failure_for
from worker.llm.request import plan_thinking, request_params
from worker.tools import definitions

PING = "Reply with the single word OK."


@dataclasses.dataclass
class Check:
    name: str
    ok: bool
    detail: str


class _Quiet(SilentHooks):
    """Loop hooks that keep only what the doctor reports."""

    def __init__(self) -> None:
        self.thinking = 0

    def on_thinking(self, round_no: int, text: str) -> None:
        self.thinking += 1


def run_doctor(settings: Settings, *, offline: bool = False,
               console: Console | None = None) -> int:
    """Run every check, print the table; 0 when all pass, 1 otherwise."""
    console = console or Console()
    if offline or settings.llm_target == "missing":
        why = "as asked" if offline else "no ANTHROPIC_API_KEY or ANTHROPIC_BASE_URL is set"
        with offline_model() as url:
            console.print(f"[yellow]Offline ({why}): these checks ran against Sunrise's offline "
                          f"model at {url}, a test double, not Claude.[/yellow]")
            target = settings.model_copy(update={"anthropic_base_url": url,
                                                 "anthropic_api_key": OFFLINE_KEY})
            return _report(console, settings.model, _checks(target))
    where = (f"the server at ANTHROPIC_BASE_URL={settings.anthropic_base_url}"
             if settings.llm_target == "custom" else "the Claude API")
    console.print(f"Checks against {where}, model {settings.model}.")
    return _report(console, settings.model, _checks(settings))


def _report(console: Console, model: str, checks: list[Check]) -> int:
    table = Table(title=f"sunrise doctor: {model}")
    for column in ("check", "result", "detail"):
        table.add_column(column)
    for check in checks:
        table.add_row(check.name, "[green]PASS[/green]" if check.ok else "[red]FAIL[/red]",
                      check.detail)
    console.print(table)
    return 0 if all(c.ok for c in checks) else 1


def _checks(settings: Settings) -> list[Check]:
    client = make_client(settings)
    model = settings.model
    checks = [_guarded("API key and model id", lambda: _model_check(client, model))]
    checks.append(_table_check(settings))
    if not checks[0].ok:  # nothing else can work; say why once
        return checks
    ensure_sample_db(settings)
    sandbox = SqlSandbox(settings.duckdb_path, timeout_s=settings.sql_timeout_s)
    try:
        prompt = build_system_prompt(sandbox.describe_schema(), dt.date.today())
        outcome: dict[str, Any] = {}
        checks.append(_guarded("one tool round", lambda: _tool_round(
            client, sandbox, settings, prompt, outcome)))
        checks.append(_guarded("prompt fits the cache", lambda: _cache_size(
            client, settings, prompt)))
        checks.append(_guarded("second call reads the cache", lambda: _cache_read(
            client, settings, prompt)))
        checks.append(_cost_check(outcome.get("loop")))
    finally:
        sandbox.close()
    return checks


def _guarded(name: str, check: Callable[[], tuple[bool, str]]) -> Check:
    try:
        ok, detail = check()
    except JobFailure as exc:
        return Check(name, False, f"{exc.code}: {exc.detail}")
    except anthropic.APIError as exc:
        failure = failure_for(exc, model="?", retries=0)
        return Check(name, False, f"{failure.code}: {failure.detail}")
    return Check(name, ok, detail)


def _model_check(client: anthropic.Anthropic, model: str) -> tuple[bool, str]:
    try:
        info = client.models.retrieve(model)
    except anthropic.APIError as exc:
        failure = failure_for(exc, model=model, retries=client.max_retries)
        return False, f"{failure.code}: {failure.detail}"
    return True, (f"the key works and {model} exists (context {info.max_input_tokens or '?'}, "
                  f"max output {info.max_tokens or '?'})")


def _table_check(settings: Settings) -> Check:
    rules = rules_for(settings.model)
    plan = plan_thinking(settings.model, settings.thinking, settings.effort)
    if rules is None:
        return Check("capability table", False, f"{settings.model} is not in shared/claude_"
                     "models.py: no thinking or effort arguments are sent and cost is null")
    thinking = f"thinking {plan.mode}" + (f", effort {plan.effort}" if plan.effort else "")
    notes = f" ({'; '.join(plan.notes)})" if plan.notes else ""
    return Check("capability table", True, f"{thinking}{notes}; cache minimum "
                 f"{rules.cache_min_tokens} tokens; ${rules.price.input}/"
                 f"${rules.price.output} per MTok in/out")


def _tool_round(client, sandbox: SqlSandbox, settings: Settings, prompt: str,
                outcome: dict[str, Any]) -> tuple[bool, str]:
    table = sandbox.describe_schema()[0][0]
    hooks = _Quiet()
    loop = AgentLoop(client=client, sandbox=sandbox, settings=settings, system_prompt=prompt,
                     hooks=hooks)
    outcome["loop"] = loop
    result: LoopOutcome = loop.run([], f"How many rows does the {table} table have?")
    stats = loop.stats
    ok = stats.tool_rounds >= 1 and not result.truncated and bool(result.answer_text.strip())
    return ok, (f"{stats.llm_calls} calls, {stats.tool_rounds} tool round(s), "
                f"{hooks.thinking} thinking summaries, answer via {result.parse_path}: "
                f"{result.answer_text[:60]!r}")


def _cache_size(client, settings: Settings, prompt: str) -> tuple[bool, str]:
    counted = client.messages.count_tokens(
        model=settings.model, system=system_blocks(prompt), tools=definitions(),
        messages=[{"role": "user", "content": PING}]).input_tokens
    rules = rules_for(settings.model)
    minimum = rules.cache_min_tokens if rules else None
    if minimum is None:
        return False, f"{counted} tokens; the model's cache minimum is unknown"
    ok = counted >= minimum
    return ok, (f"system prompt and tools: {counted} tokens, minimum {minimum}"
                + ("" if ok else ": below it nothing is cached"))


def _cache_read(client, settings: Settings, prompt: str) -> tuple[bool, str]:
    params = request_params(settings, settings.model, system=system_blocks(prompt),
                            tools=definitions(),
                            messages=[{"role": "user", "content": PING}])
    params["max_tokens"] = min(params["max_tokens"], 2048)
    first = client.messages.create(**params).usage
    second = client.messages.create(**params).usage
    read = second.cache_read_input_tokens or 0
    return read > 0, (f"first call wrote {first.cache_creation_input_tokens or 0} and read "
                      f"{first.cache_read_input_tokens or 0}; second read {read} tokens")


def _cost_check(loop: AgentLoop | None) -> Check:
    if loop is None or loop.stats.llm_calls == 0:
        return Check("expected cost per job", False, "no tool round to measure")
    usage = loop.stats.usage
    if usage.cost_usd is None:
        return Check("expected cost per job", False, "the model has no known price "
                     "(set SUNRISE_PRICES)")
    return Check("expected cost per job", True, (
        f"about ${usage.cost_usd:.4f} (the tool round above: {loop.stats.llm_calls} calls, "
        f"{usage.input_tokens} input, {usage.cache_read_tokens} cache read, "
        f"{usage.cache_creation_tokens} cache write, {usage.output_tokens} output tokens; "
        "questions needing more rounds cost more)"))
