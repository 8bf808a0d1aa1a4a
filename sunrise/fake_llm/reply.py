"""What the offline model decided to say, before it is priced and encoded.

A `Reply` is content blocks plus a stop reason. Policies (the demo analyst,
scripted scenarios) build replies; faults reshape them; `message_builder`
turns one into a Messages API `Message`.
"""

from __future__ import annotations

from dataclasses import dataclass

from sunrise.fake_llm.token_estimate import block_tokens
from sunrise.fake_llm.wire import new_id

SQL_TOOL = "execute_sql"
STOP_REASONS = {"end_turn", "tool_use", "max_tokens", "pause_turn", "refusal", "stop_sequence",
                "model_context_window_exceeded"}
REFUSAL_DETAILS = {
    "type": "refusal",
    "category": None,
    "explanation": "The offline model was scripted to refuse this request.",
}


@dataclass(frozen=True)
class Reply:
    """``bare``: an empty turn that gets no thinking either (the documented 2-3 token
    empty ``end_turn``). ``hidden_thinking_tokens``: thinking billed as output but not
    returned (``display: "omitted"``). ``thinking``: what the reply's thinking says,
    when the request makes the model think (else a summary is made up)."""

    content: list[dict]
    stop_reason: str = "end_turn"
    stop_details: dict | None = None
    bare: bool = False
    hidden_thinking_tokens: int = 0
    thinking: str | None = None

    @property
    def text(self) -> str:
        return "".join(b["text"] for b in self.content if b["type"] == "text")

    @property
    def tool_uses(self) -> list[dict]:
        return [b for b in self.content if b["type"] == "tool_use"]

    @property
    def is_final_text(self) -> bool:
        """An `end_turn` answer made only of text: what answer-shaping faults act on."""
        return self.stop_reason == "end_turn" and not self.tool_uses


def text_block(text: str) -> dict:
    return {"type": "text", "text": text}


def tool_use_block(name: str, tool_input: dict) -> dict:
    return {"type": "tool_use", "id": new_id("toolu"), "name": name, "input": tool_input}


def text_reply(text: str, stop_reason: str = "end_turn", stop_details: dict | None = None) -> Reply:
    if stop_reason == "refusal" and stop_details is None:
        stop_details = REFUSAL_DETAILS
    return Reply([text_block(text)], stop_reason, stop_details)


def tool_reply(text: str | None, calls: list[tuple[str, dict]]) -> Reply:
    """Optional lead-in text, then one `tool_use` block per (name, input)."""
    content = [text_block(text)] if text else []
    content += [tool_use_block(name, tool_input) for name, tool_input in calls]
    return Reply(content, "tool_use")


def empty_reply() -> Reply:
    return Reply([], "end_turn", bare=True)


def cut_to_max_tokens(reply: Reply, max_tokens: int) -> Reply:
    """Honour `max_tokens` (thinking counts towards it): keep whole blocks while they
    fit, cut the next text block.

    Thinking blocks are kept whole (a signed block cannot be cut); a tool call that
    does not fit is dropped entirely (its input would be unusable JSON). Returns
    `reply` unchanged when it already fits.
    """
    spent = sum(block_tokens(block) for block in reply.content) + reply.hidden_thinking_tokens
    if spent <= max_tokens:
        return reply
    budget, kept = max_tokens - reply.hidden_thinking_tokens, []
    for block in reply.content:
        cost = block_tokens(block)
        if block["type"] == "thinking":
            kept.append(block)
            budget -= cost
            continue
        if cost <= budget:
            kept.append(block)
            budget -= cost
            continue
        if block["type"] == "text" and budget > 0:
            cut = block["text"].encode()[: budget * 4].decode("utf-8", "ignore")
            kept.append(text_block(cut))
        break
    return Reply(kept or [text_block("")], "max_tokens",
                 hidden_thinking_tokens=reply.hidden_thinking_tokens)
