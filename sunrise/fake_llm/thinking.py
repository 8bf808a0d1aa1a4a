"""Thinking blocks: what the offline model emits when it thinks, and what it demands back.

Emitting (``think``), by the request's effective thinking mode (``model_rules``):

- ``adaptive`` / ``enabled``: one thinking block before the reply. Its ``thinking``
  text is the summary when ``display`` is ``summarized`` and ``""`` when it is
  ``omitted``; the full thinking is billed as output either way. On models that
  return the text written between tool calls as thinking
  (``text_between_tools_as_thinking``), a tool call's lead-in text joins that block;
- ``between_tools``: no up-front thinking, but a tool call's lead-in text comes back
  as a thinking block carrying that text;
- ``disabled``: nothing changes.

Checking (``check_replay``), as the real API does for a tool continuation
(https://platform.claude.com/docs/en/build-with-claude/extended-thinking, "thinking
with tool use"): every ``signature`` must be one this server issued for that exact
``thinking`` text and model (thinking blocks are tied to the model), and an assistant
message of the current tool loop must carry, unmodified and in order, every thinking
block that came with its ``tool_use`` blocks. Both checks are stateless: the
signature is a keyed MAC with its own nonce, and the MAC of a reply's signatures is
part of each ``tool_use`` id it issued.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
from dataclasses import replace

from sunrise.fake_llm.errors import ApiError
from sunrise.fake_llm.reply import Reply
from sunrise.fake_llm.token_estimate import text_tokens
from sunrise.fake_llm.wire import new_id

_TOOL_ID = re.compile(r"^toolu_01[0-9A-Za-z]{14}(?P<tag>[0-9a-f]{8})$")


class ThinkingSigner:
    """Signs and verifies thinking blocks with a key private to one server instance."""

    def __init__(self, key: bytes | None = None):
        self._key = key or os.urandom(32)

    def _mac(self, *parts: str | bytes) -> bytes:
        mac = hmac.new(self._key, digestmod=hashlib.sha256)
        for part in parts:
            mac.update(part if isinstance(part, bytes) else part.encode())
            mac.update(b"\0")
        return mac.digest()

    def sign(self, model: str, thinking: str) -> str:
        nonce = os.urandom(12)
        return base64.b64encode(nonce + self._mac(model, thinking, nonce)).decode()

    def valid(self, model: str, thinking: str, signature: object) -> bool:
        try:
            raw = base64.b64decode(str(signature), validate=True)
        except ValueError:
            return False
        nonce, mac = raw[:12], raw[12:]
        return len(raw) == 44 and hmac.compare_digest(mac, self._mac(model, thinking, nonce))

    def tool_id(self, signatures: list[str]) -> str:
        """A ``tool_use`` id bound to the thinking blocks issued with it."""
        tag = self._mac("tool", *signatures).hex()[:8]
        return new_id("toolu")[:22] + tag

    def check_replay(self, model: str, messages: list[dict], turn_start: int) -> None:
        """Raise ApiError(400) for a thinking block that was forged, edited, moved to
        another model, or dropped from a tool continuation of the current turn."""
        for index, message in enumerate(messages):
            if message.get("role") != "assistant" or not isinstance(message["content"], list):
                continue
            blocks = message["content"]
            signatures = []
            for position, block in enumerate(blocks):
                if block.get("type") != "thinking":
                    continue
                if not self.valid(model, block.get("thinking", ""), block.get("signature")):
                    raise ApiError(400, f"messages.{index}.content.{position}: Invalid "
                                   "`signature` in `thinking` block")
                signatures.append(block["signature"])
            if index <= turn_start:
                continue
            expected = self._mac("tool", *signatures).hex()[:8]
            for block in blocks:
                match = _TOOL_ID.match(str(block.get("id", ""))) \
                    if block.get("type") == "tool_use" else None
                if match and match.group("tag") != expected:
                    raise ApiError(400, f"messages.{index}.content: thinking blocks in an "
                                   "assistant turn with tool use must be passed back unmodified "
                                   "and in order, as they were in the original response")


def summary_for(reply: Reply, question: str) -> str:
    """The offline model's deterministic 'thinking' about what it is about to say."""
    calls = reply.tool_uses
    if calls:
        sql = "; ".join(str((c.get("input") or {}).get("sql", c.get("name"))) for c in calls)
        return (f"The user asks: {question.strip()[:200]!r}. I need data before answering, "
                f"so I will run: {sql}")
    return ("I have what I need from the query results; I will write the JSON answer "
            "with the key figures and a chart where it helps.")


def think(reply: Reply, *, mode: str, display: str, between_tools_as_thinking: bool,
          model: str, question: str, signer: ThinkingSigner) -> Reply:
    """``reply`` with the thinking blocks ``mode`` calls for (see the module docstring)."""
    if reply.bare or mode == "disabled":
        return _with_tool_ids(reply, [], signer)
    lead_in = [b for b in reply.content if b["type"] == "text"] if reply.tool_uses else []
    rest = [b for b in reply.content if b not in lead_in]
    notes = " ".join(b["text"] for b in lead_in).strip()
    if mode == "between_tools":
        if not notes:
            return _with_tool_ids(reply, [], signer)
        text, hidden = notes, ""
    else:
        full = reply.thinking or summary_for(reply, question)
        if lead_in and between_tools_as_thinking:
            full = f"{full}\n{notes}"
        else:
            rest = reply.content
        text = full if display == "summarized" else ""
        hidden = "" if display == "summarized" else full
    block = {"type": "thinking", "thinking": text, "signature": signer.sign(model, text)}
    thought = replace(reply, content=[block, *rest],
                      hidden_thinking_tokens=text_tokens(hidden))
    return _with_tool_ids(thought, [block["signature"]], signer)


def _with_tool_ids(reply: Reply, signatures: list[str], signer: ThinkingSigner) -> Reply:
    content = [dict(b, id=signer.tool_id(signatures)) if b["type"] == "tool_use" else b
               for b in reply.content]
    return replace(reply, content=content)
