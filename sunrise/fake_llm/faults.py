"""Fault injection: which call misbehaves, and how.

Faults are armed through `POST /_control/faults` either for the next N calls
(`{"kind": K, "count": N}`) or at a rate (`{"kind": K, "rate": 0.3}`, drawn from
an RNG seeded by the server's `seed`, so a run is repeatable for a given call
sequence). A fault waits for the first `/v1/messages` call it applies to:

- `429`, `529`, `500`: an error response (`retry_after` seconds on 429/529);
- `401`, `403`, `404`, `413`: the errors of a bad key, a key without permission,
  an unknown model and an oversized request (never retried by the SDK);
- `hang`: stall `seconds` (default: config `hang_seconds`) before answering,
  ending early when the client disconnects — this is how client timeouts are tested;
  these apply to any call and are drawn before the reply is built;
- `stream_error`: streaming calls only; an `event: error` (`overloaded_error`)
  after part of the reply;
- `max_tokens`: half of the reply's text, stop `max_tokens`, tool calls dropped;
- `context_window`: the same cut, stop `model_context_window_exceeded`;
- `empty_end_turn`: no content at all, stop `end_turn` (what the API documents
  after tool results);
- `refusal`: an empty text block, stop `refusal` with `stop_details`;
- `pause_turn`: a short text, stop `pause_turn`; the client resends and the
  policy carries on;
- `prose_before_json`, `fenced_json`, `invalid_json`, `no_json`: reshape a final
  text answer (end_turn, no tool calls) — prose then the JSON, the JSON in a
  ```json fence, the JSON cut short, or the answer text without JSON;
- `repeat_sql`: the reply becomes (or its first call is rewritten into) an
  `execute_sql` call repeating the conversation's previous SQL exactly; applies
  once there is a previous SQL.
At most one request fault and one reply fault fire per call. Count faults fire
in the order they were armed, before rate faults.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, replace

from sunrise.fake_llm.conversation import last_sql
from sunrise.fake_llm.reply import (
    SQL_TOOL,
    Reply,
    empty_reply,
    text_block,
    text_reply,
    tool_reply,
)

REQUEST_KINDS = ("429", "529", "500", "401", "403", "404", "413", "hang")
ANSWER_KINDS = ("prose_before_json", "fenced_json", "invalid_json", "no_json")
REPLY_KINDS = ("stream_error", "max_tokens", "context_window", "empty_end_turn", "refusal",
               "pause_turn", "repeat_sql", *ANSWER_KINDS)
KINDS = REQUEST_KINDS + REPLY_KINDS


@dataclass
class FaultRule:
    kind: str
    remaining: int | None = None
    rate: float | None = None
    retry_after: float | None = None
    seconds: float | None = None
    fired: int = 0

    def as_json(self) -> dict:
        return {key: value for key, value in vars(self).items() if value is not None}


def parse_rule(spec: dict) -> FaultRule:
    """Validate a control-plane fault spec; raises ValueError with a readable message."""
    kind = str(spec.get("kind", ""))
    if kind not in KINDS:
        raise ValueError(f"unknown fault kind {kind!r}; expected one of {', '.join(KINDS)}")
    count, rate = spec.get("count"), spec.get("rate")
    if (count is None) == (rate is None):
        raise ValueError("give exactly one of 'count' (next N calls) or 'rate' (0..1)")
    if count is not None and (not isinstance(count, int) or count < 1):
        raise ValueError("'count' must be a positive integer")
    if rate is not None and not (isinstance(rate, (int, float)) and 0 <= rate <= 1):
        raise ValueError("'rate' must be a number between 0 and 1")
    return FaultRule(
        kind=kind,
        remaining=count,
        rate=float(rate) if rate is not None else None,
        retry_after=spec.get("retry_after"),
        seconds=spec.get("seconds"),
    )


class FaultPlan:
    """The armed faults of one server instance."""

    def __init__(self, seed: int):
        self._seed = seed
        self._rng = random.Random(seed)
        self._rules: list[FaultRule] = []

    def add(self, spec: dict) -> FaultRule:
        rule = parse_rule(spec)
        self._rules.append(rule)
        return rule

    def clear(self) -> None:
        self._rules.clear()
        self._rng = random.Random(self._seed)

    def snapshot(self) -> list[dict]:
        return [rule.as_json() for rule in self._rules]

    def take(self, applies: Callable[[str], bool]) -> FaultRule | None:
        """The fault this call suffers, if any; consumes one count of it."""
        for rule in self._rules:
            if rule.remaining and applies(rule.kind):
                rule.remaining -= 1
                rule.fired += 1
                if rule.remaining == 0:
                    self._rules.remove(rule)
                return replace(rule)
        for rule in self._rules:
            # The draw happens only for applicable rules, so the sequence of
            # outcomes depends on the calls made, not on wall time.
            if rule.rate is not None and applies(rule.kind) and self._rng.random() < rule.rate:
                rule.fired += 1
                return replace(rule)
        return None


def reply_fault_applies(kind: str, reply: Reply, stream: bool, messages: list[dict]) -> bool:
    if kind == "stream_error":
        return stream
    if kind in ANSWER_KINDS:
        return reply.is_final_text
    if kind == "repeat_sql":
        return last_sql(messages) is not None
    return kind in REPLY_KINDS


def apply_reply_fault(kind: str, reply: Reply, messages: list[dict]) -> Reply:
    """Reshape `reply` as fault `kind` says (`stream_error` is left to the encoder)."""
    text = reply.text
    if kind in ("max_tokens", "context_window"):
        words = (text or "Let me look into that for you").split(" ")
        stop = "max_tokens" if kind == "max_tokens" else "model_context_window_exceeded"
        return Reply([text_block(" ".join(words[: max(1, len(words) // 2)]))], stop)
    if kind == "empty_end_turn":
        return empty_reply()
    if kind == "refusal":
        return text_reply("", "refusal")
    if kind == "pause_turn":
        return text_reply("Still working on this; continuing in the next request.", "pause_turn")
    if kind == "prose_before_json":
        return text_reply("Here is what I found in the data.\n\n" + text)
    if kind == "fenced_json":
        return text_reply("Here is the answer:\n\n```json\n" + text + "\n```\n")
    if kind == "invalid_json":
        return text_reply(text[: max(1, len(text) * 2 // 3)])
    if kind == "no_json":
        return text_reply(_answer_text(text))
    if kind == "repeat_sql":
        return _repeat_sql(reply, last_sql(messages) or "")
    return reply


def _answer_text(text: str) -> str:
    try:
        answer = json.loads(text)
    except ValueError:
        return text
    if isinstance(answer, dict) and isinstance(answer.get("answerText"), str):
        return answer["answerText"].replace("{{chart:0}}", "").strip()
    return text


def _repeat_sql(reply: Reply, sql: str) -> Reply:
    calls = reply.tool_uses
    if not calls:
        return tool_reply(
            "Let me run that query again to double-check.", [(SQL_TOOL, {"sql": sql})]
        )
    first = calls[0]
    content = [
        dict(block, input={"sql": sql}) if block is first else block for block in reply.content
    ]
    return Reply(content, reply.stop_reason, reply.stop_details)
