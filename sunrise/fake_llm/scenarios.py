"""Scripted scenarios: a test decides exactly what the model says, turn by turn.

A scenario is registered with `POST /_control/scenarios {"name": N, "turns": [...]}`
and chosen by the marker `[[scenario:N]]` in the current question (the latest
plain-text user message). Reply k (0-based) of the current question's tool loop
— k = the number of assistant messages after the question, plus continuation
prompts sent after empty replies — is the k-th non-error turn:

- `{"text": "..."}`: text, stop `end_turn`;
- `{"tool_calls": [{"sql": "..."} | {"name": ..., "input": {...}}], "text"?: "..."}`:
  optional text, then one `tool_use` per call, stop `tool_use`;
- `{"stop_reason": "max_tokens|model_context_window_exceeded|pause_turn|refusal|end_turn",
  "text": "..."}`;
- `{"empty": true}`: an `end_turn` with no content at all (and no thinking);
- `{"error": 429|500|529|..., "retry_after"?: s, "message"?: "..."}`: an error
  turn fires once, for the identical request, before the reply that follows it.
  Retries of that request then get the next error turn or the reply, which is
  how an SDK retry sequence is scripted.
Any reply turn may carry `"thinking": "..."`: the summary of the thinking block
the reply gets when the request's thinking mode thinks (see `thinking`).
Text is literal. Asking past the last turn returns a text saying the scenario is
exhausted; an unknown name is a 400 `invalid_request_error`.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, replace

from sunrise.fake_llm.conversation import Turn
from sunrise.fake_llm.errors import ERROR_TYPES, ApiError
from sunrise.fake_llm.reply import (
    SQL_TOOL,
    STOP_REASONS,
    Reply,
    empty_reply,
    text_reply,
    tool_reply,
)

MARKER = re.compile(r"\[\[scenario:([A-Za-z0-9_.\-]+)\]\]")


@dataclass(frozen=True)
class _Step:
    errors: tuple[dict, ...]
    reply: dict | None


def _validate_turn(turn: object, position: int) -> dict:
    where = f"turn {position}"
    if not isinstance(turn, dict):
        # ValueError, not TypeError: the control plane reports both as a 400.
        raise ValueError(f"{where}: must be an object")
    if "error" in turn:
        if turn["error"] not in ERROR_TYPES:
            raise ValueError(f"{where}: 'error' must be one of {sorted(ERROR_TYPES)}")
    elif "tool_calls" in turn:
        calls = turn["tool_calls"]
        if not isinstance(calls, list) or not calls:
            raise ValueError(f"{where}: 'tool_calls' must be a non-empty list")
        for call in calls:
            if not isinstance(call, dict) or not ("sql" in call or "input" in call):
                raise ValueError(f"{where}: each tool call needs 'sql' or 'input'")
    elif turn.get("empty") is True:
        pass
    elif "stop_reason" in turn:
        if turn["stop_reason"] not in STOP_REASONS:
            raise ValueError(f"{where}: 'stop_reason' must be one of {sorted(STOP_REASONS)}")
    elif not isinstance(turn.get("text"), str):
        raise ValueError(f"{where}: needs 'text', 'tool_calls', 'stop_reason' or 'error'")
    return turn


def _steps(turns: list[dict]) -> list[_Step]:
    steps, errors = [], []
    for turn in turns:
        if "error" in turn:
            errors.append(turn)
        else:
            steps.append(_Step(tuple(errors), turn))
            errors = []
    if errors:
        steps.append(_Step(tuple(errors), None))
    return steps


def _reply(turn: dict) -> Reply:
    if turn.get("empty") is True:
        return empty_reply()
    if "tool_calls" in turn:
        calls = [
            (call.get("name", SQL_TOOL), call["input"] if "input" in call else {"sql": call["sql"]})
            for call in turn["tool_calls"]
        ]
        reply = tool_reply(turn.get("text"), calls)
    else:
        reply = text_reply(turn.get("text", ""), turn.get("stop_reason", "end_turn"))
    return replace(reply, thinking=turn.get("thinking"))


class ScenarioBook:
    """The scenarios registered on one server instance, and which error turns have fired."""

    def __init__(self) -> None:
        self._steps: dict[str, list[_Step]] = {}
        self._raw: dict[str, list[dict]] = {}
        self._errors_fired: dict[tuple[str, bytes], int] = {}

    def add(self, name: object, turns: object) -> None:
        """Register (or replace) a scenario; raises ValueError on a malformed one."""
        if not isinstance(name, str) or not MARKER.fullmatch(f"[[scenario:{name}]]"):
            raise ValueError("'name' must be letters, digits, '_', '-' or '.'")
        if not isinstance(turns, list) or not turns:
            raise ValueError("'turns' must be a non-empty list")
        checked = [_validate_turn(turn, i) for i, turn in enumerate(turns)]
        self._raw[name] = checked
        self._steps[name] = _steps(checked)

    def clear(self) -> None:
        self._steps.clear()
        self._raw.clear()
        self._errors_fired.clear()

    def snapshot(self) -> dict[str, list[dict]]:
        return dict(self._raw)

    @staticmethod
    def selected(turn: Turn | None) -> str | None:
        """The scenario named in the current question, if any."""
        match = MARKER.search(turn.question) if turn else None
        return match.group(1) if match else None

    def reply(self, name: str, turn: Turn, messages: list[dict]) -> Reply:
        """The scripted reply for this call; raises ApiError for an error turn."""
        steps = self._steps.get(name)
        if steps is None:
            raise ApiError(
                400, f"unknown scenario {name!r}: register it with POST /_control/scenarios"
            )
        k = turn.replies_so_far
        if k >= len(steps):
            return text_reply(f"[offline model: scenario {name!r} has no reply {k + 1}]")
        step = steps[k]
        if step.errors:
            key = (name, hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).digest())
            fired = self._errors_fired.get(key, 0)
            if fired < len(step.errors):
                self._errors_fired[key] = fired + 1
                error = step.errors[fired]
                raise ApiError(error["error"], error.get("message"), error.get("retry_after"))
        if step.reply is None:
            return text_reply(f"[offline model: scenario {name!r} has no reply {k + 1}]")
        return _reply(step.reply)
