"""The Messages API request Sunrise sends, valid for the model it goes to.

Thinking mode, effort and ``max_tokens`` come from the settings, resolved against
the model's rules in ``shared/claude_models.py``: a setting the model does not
accept becomes the nearest one it does (logged once), so a request is never a 400
because of Sunrise's own defaults. The streaming loop (``worker/agent/loop.py``)
and economy mode (``worker/batches/message_batches.py``) both build their requests here.

The installed ``anthropic`` SDK (>= 2.14) types ``thinking`` (adaptive with
``display``, ``between_tools``, ``disabled``) and ``output_config.effort``, so they
are passed as ordinary arguments, not through ``extra_body``.
"""
from __future__ import annotations

import copy
import dataclasses
import logging

from shared.claude_models import THINKING_LADDER, ModelRules, rules_for, warn_unknown_once
from shared.config import Settings

logger = logging.getLogger(__name__)

UNCACHEABLE = ("thinking", "redacted_thinking")
WIRE_THINKING = {"adaptive": "adaptive", "between_tools": "between_tools", "off": "disabled"}
_noted: set[tuple[str, str]] = set()


@dataclasses.dataclass(frozen=True)
class ThinkingPlan:
    """How one model will think: the Sunrise mode, the effort, and the request arguments.

    ``mode`` is ``adaptive``, ``between_tools``, ``off`` or ``model default`` (a model
    missing from the table gets no thinking arguments at all). ``notes`` say where
    the plan departs from the settings, and why.
    """

    model: str
    mode: str
    effort: str | None
    params: dict
    notes: tuple[str, ...] = ()


def plan_thinking(model: str, thinking: str, effort: str) -> ThinkingPlan:
    """Resolve the ``thinking``/``effort`` settings for ``model``. Pure; never raises."""
    rules = rules_for(model)
    if rules is None:
        return ThinkingPlan(model, "model default", None, {},
                            ("model not in the capability table: the API's defaults apply",))
    notes = []
    mode = _nearest_mode(rules, thinking)
    if mode != thinking:
        notes.append(f"{model} does not accept thinking={thinking!r}; using {mode!r}")
    params: dict = {}
    if mode == "adaptive":
        # Summaries make the thinking visible to subscribers (the SSE `thinking` event);
        # the thinking itself is billed the same either way.
        params["thinking"] = {"type": "adaptive", "display": "summarized"}
    else:
        params["thinking"] = {"type": WIRE_THINKING[mode]}
    chosen = _nearest_effort(rules, mode, effort)
    if chosen is not None:
        params["output_config"] = {"effort": chosen}
        if chosen != effort:
            notes.append(f"{model} does not take effort={effort!r} with thinking={mode!r}; "
                         f"using {chosen!r}")
    elif rules.efforts == ():
        notes.append(f"{model} has no effort parameter")
    return ThinkingPlan(model, mode, chosen, params, tuple(notes))


def _nearest_mode(rules: ModelRules, wanted: str) -> str:
    # The setting itself, else less thinking, else more (a model that always thinks).
    at = THINKING_LADDER.index(wanted)
    order = [wanted, *THINKING_LADDER[at + 1:], *reversed(THINKING_LADDER[:at])]
    return next(mode for mode in order if rules.accepts_setting(mode))


def _nearest_effort(rules: ModelRules, mode: str, wanted: str) -> str | None:
    allowed = rules.between_tools_efforts if mode == "between_tools" else rules.efforts
    if not allowed:
        return None
    if wanted in allowed:
        return wanted
    lower = [e for e in allowed if _rank(e) < _rank(wanted)]
    return lower[-1] if lower else allowed[0]


def _rank(effort: str) -> int:
    return ("low", "medium", "high", "xhigh", "max").index(effort)


def max_tokens_for(settings: Settings, model: str) -> int:
    """``settings.max_tokens``, lowered to the model's output limit when that is smaller."""
    rules = rules_for(model)
    return min(settings.max_tokens, rules.max_output) if rules else settings.max_tokens


def request_params(settings: Settings, model: str, *, system: list[dict], tools: list[dict],
                   messages: list[dict]) -> dict:
    """Keyword arguments for ``messages.create``/``stream`` (and Message Batches ``params``)."""
    plan = plan_thinking(model, settings.thinking, settings.effort)
    _log_once(plan)
    return {"model": model, "max_tokens": max_tokens_for(settings, model), "system": system,
            "tools": tools, "messages": messages, **plan.params}


def _log_once(plan: ThinkingPlan) -> None:
    if plan.mode == "model default":
        warn_unknown_once(plan.model, "no thinking or effort arguments are sent")
        return
    for note in plan.notes:
        if (plan.model, note) not in _noted:
            _noted.add((plan.model, note))
            logger.info("%s", note)


def with_breakpoint(messages: list[dict], cache_control: dict) -> list[dict]:
    """``messages`` with the newest message's last cacheable block marked as a breakpoint.

    Thinking blocks cannot carry ``cache_control``, so they are skipped. The list and
    the messages in it are not modified (the caller keeps replaying them).
    """
    last = copy.copy(messages[-1])
    content = last["content"]
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
    for at in range(len(blocks) - 1, -1, -1):
        if blocks[at]["type"] not in UNCACHEABLE:
            blocks[at] = {**blocks[at], "cache_control": cache_control}
            break
    last["content"] = blocks
    return [*messages[:-1], last]
