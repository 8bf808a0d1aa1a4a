"""The per-model request rules of the real Messages API, applied to each request.

Table-driven: the rules come from ``shared/claude_models.py`` (the same table the
worker's request builder reads), and each check below names the page in
``SOURCES`` it enforces. A request that breaks one gets the real API's status and
error type (400 ``invalid_request_error``, 404 ``not_found_error``).

A model missing from the table but listed by the installed ``anthropic`` SDK is
served with only the generic checks; any other model id is a 404, as on the API.
"""

from __future__ import annotations

import functools
import typing
from dataclasses import dataclass

import anthropic.types

from shared.claude_models import EFFORTS, SOURCES, ModelRules, rules_for
from sunrise.fake_llm.errors import ApiError

THINKING_TYPES = ("adaptive", "between_tools", "disabled", "enabled")
DISPLAYS = ("summarized", "omitted")
FORCED = ("any", "tool")


@dataclass(frozen=True)
class Effective:
    """How the model treats this request: its thinking mode, display and effort."""

    model: str
    rules: ModelRules | None
    thinking: str  # adaptive | between_tools | disabled | enabled
    display: str
    effort: str | None

    @property
    def between_tools_as_thinking(self) -> bool:
        return bool(self.rules and self.rules.text_between_tools_as_thinking)


@functools.cache
def sdk_models() -> frozenset[str]:
    """The model ids the installed SDK lists (``anthropic.types.ModelParam``)."""
    literal = typing.get_args(anthropic.types.ModelParam)[0]
    return frozenset(typing.get_args(literal))


def _fail(rule: str, message: str) -> typing.NoReturn:
    raise ApiError(400, f"{message} (see {SOURCES[rule]})")


def check_request(body: dict, prompt_tokens: int) -> Effective:
    """Apply the model's rules to a validated request body (whose prompt counts
    ``prompt_tokens``); raise ApiError when one is broken."""
    model = body["model"]
    rules = rules_for(model)
    if rules is None and model not in sdk_models():
        raise ApiError(404, f"model: {model}")
    thinking = _thinking(body, rules)
    effort = _effort(body, rules, thinking)
    _sampling(body, rules, thinking)
    _tool_choice(body, rules, thinking)
    if rules is not None:
        if body.get("max_tokens") is not None and body["max_tokens"] > rules.max_output:
            _fail("max_output", f"max_tokens: {body['max_tokens']} > {rules.max_output}, which "
                  f"is the maximum allowed number of output tokens for {model}")
        if prompt_tokens > rules.context_window:
            _fail("context_window", f"prompt is too long: {prompt_tokens} tokens > "
                  f"{rules.context_window} maximum")
    config = body.get("thinking") or {}
    default_display = rules.display_default if rules else "summarized"
    return Effective(model, rules, thinking, config.get("display") or default_display, effort)


def _thinking(body: dict, rules: ModelRules | None) -> str:
    config = body.get("thinking")
    if config is None:
        return rules.thinking_default if rules else "disabled"
    if not isinstance(config, dict) or config.get("type") not in THINKING_TYPES:
        _fail("thinking", f"thinking.type: Input should be one of {', '.join(THINKING_TYPES)}")
    kind = config["type"]
    if rules is not None and kind not in rules.thinking_types:
        hint = f"; use '{rules.lowest_thinking()}'" if kind == "disabled" else ""
        source = "between_tools" if "between_tools" in rules.thinking_types else "thinking"
        _fail(source, f"thinking.type '{kind}' is not supported on {rules.model}{hint}")
    extra = set(config) - {"type"}
    if kind == "between_tools" and extra:
        _fail("between_tools", f"thinking: type 'between_tools' takes no other fields "
              f"(got {', '.join(sorted(extra))})")
    if "display" in config and config["display"] not in DISPLAYS:
        _fail("display", f"thinking.display: Input should be {' or '.join(DISPLAYS)}")
    if kind == "enabled":
        budget = config.get("budget_tokens")
        if not isinstance(budget, int) or budget < 1024 or budget >= body.get("max_tokens", 0):
            _fail("thinking", "thinking.budget_tokens: must be at least 1024 and less than "
                  "max_tokens")
    return kind


def _effort(body: dict, rules: ModelRules | None, thinking: str) -> str | None:
    effort = (body.get("output_config") or {}).get("effort")
    if effort is None:
        return rules.effort_default if rules else None
    if effort not in EFFORTS:
        _fail("effort", f"output_config.effort: Input should be one of {', '.join(EFFORTS)}")
    if rules is None:
        return effort
    if not rules.efforts:
        _fail("effort", f"output_config.effort is not supported on {rules.model}")
    if effort not in rules.efforts:
        _fail("effort", f"output_config.effort '{effort}' is not supported on {rules.model}")
    if thinking == "between_tools" and effort not in rules.between_tools_efforts:
        _fail("between_tools", f"thinking type 'between_tools' is accepted at effort "
              f"{', '.join(rules.between_tools_efforts)}; use adaptive thinking for '{effort}'")
    return effort


def _sampling(body: dict, rules: ModelRules | None, thinking: str) -> None:
    temperature = body.get("temperature")
    changed = [name for name in ("top_p", "top_k") if body.get(name) is not None]
    if temperature is not None and temperature != 1:
        changed.insert(0, "temperature")
    if rules is not None and not rules.sampling and changed:
        _fail("sampling", f"{', '.join(changed)}: non-default sampling parameters are not "
              f"supported on {rules.model}")
    if thinking in ("adaptive", "enabled") and [c for c in changed if c != "top_p"]:
        _fail("thinking_with_tools", "thinking is not compatible with temperature or top_k "
              "modifications")


def _tool_choice(body: dict, rules: ModelRules | None, thinking: str) -> None:
    choice = body.get("tool_choice") or {}
    kind = choice.get("type") if isinstance(choice, dict) else None
    if kind not in FORCED:
        return
    if rules is not None and not rules.forced_tool_choice:
        _fail("forced_tool_choice", f"tool_choice type '{kind}' is not supported on "
              f"{rules.model}; use 'auto'")
    if thinking in ("adaptive", "enabled"):
        _fail("thinking_with_tools", "tool_choice: thinking only supports tool_choice "
              "'auto' or 'none'")


def model_info(model: str) -> dict:
    """``GET /v1/models/{id}`` from the table (404 for an id the API would not know)."""
    rules = rules_for(model)
    if rules is None and model not in sdk_models():
        raise ApiError(404, f"model: {model}")
    return {
        "type": "model", "id": model, "display_name": model, "lifecycle": "active",
        "created_at": "2026-01-01T00:00:00Z",
        "max_input_tokens": rules.context_window if rules else None,
        "max_tokens": rules.max_output if rules else None,
    }
