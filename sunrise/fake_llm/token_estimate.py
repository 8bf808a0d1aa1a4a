"""Deterministic token estimate behind every `usage` figure the offline model returns.

    tokens(text) = ceil(len(text.encode("utf-8")) / 4)        (0 for "")

The prompt is walked in cache order — `tools`, then `system`, then `messages` — as
a list of prompt blocks, each counted on its own:

- a tool definition: tokens of its compact JSON
  (`json.dumps(tool, sort_keys=True, separators=(",", ":"))`, `cache_control` removed);
- `system` as a string, or each of its text blocks: tokens(text);
- message content as a string, or a `text` block: tokens(text);
- a `tool_use` block: tokens of the compact JSON of its `input`;
- a `thinking` block: tokens of its `thinking` text (a reply's omitted thinking is
  billed on top, as output);
- a `tool_result` block: tokens of its string content, or the sum over its
  text blocks (other inner blocks: their compact JSON);
- any other block (image, document, thinking...): tokens of its compact JSON.

Input tokens of a request = the sum over its prompt blocks; there is no
per-message or per-request overhead. Output tokens of a reply = the same rule
over the reply's content blocks, at least 1. `count_tokens` returns the input
figure. The estimate is stable across runs and platforms, which is what tests
and benchmarks need; it does not try to match Claude's tokenizer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass


def text_tokens(text: str) -> int:
    """ceil(utf-8 bytes / 4)."""
    return (len(text.encode("utf-8")) + 3) // 4


def _compact(obj: object) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def block_tokens(block: dict) -> int:
    """Tokens of one content block under the rules in the module docstring."""
    kind = block.get("type")
    if kind == "text":
        return text_tokens(block.get("text", ""))
    if kind == "tool_use":
        return text_tokens(_compact(block.get("input", {})))
    if kind == "thinking":
        return text_tokens(block.get("thinking", ""))
    if kind == "tool_result":
        content = block.get("content", "")
        if isinstance(content, str):
            return text_tokens(content)
        return sum(block_tokens(inner) for inner in content)
    return text_tokens(_compact(_without_cache_control(block)))


def _without_cache_control(block: dict) -> dict:
    if "cache_control" not in block:
        return block
    return {k: v for k, v in block.items() if k != "cache_control"}


@dataclass(frozen=True)
class PromptBlock:
    """One unit of the cacheable prefix.

    `canonical` identifies the block for prefix hashing: its section or role
    plus its compact sorted JSON without `cache_control`, so moving a breakpoint
    does not change the identity of the content before it.
    """

    canonical: bytes
    tokens: int
    cache_control: dict | None


def _prompt_block(tag: str, block: dict, tokens: int) -> PromptBlock:
    stripped = _without_cache_control(block)
    canonical = _compact([tag, stripped]).encode()
    return PromptBlock(canonical, tokens, block.get("cache_control"))


def _as_blocks(content: str | list) -> list[dict]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content


def prompt_blocks(body: dict) -> list[PromptBlock]:
    """The request's prompt as ordered blocks: tools, then system, then messages."""
    blocks = []
    for tool in body.get("tools") or []:
        blocks.append(
            _prompt_block("tool", tool, text_tokens(_compact(_without_cache_control(tool))))
        )
    system = body.get("system")
    if system:
        for block in _as_blocks(system):
            blocks.append(_prompt_block("system", block, block_tokens(block)))
    for message in body.get("messages") or []:
        for block in _as_blocks(message.get("content", "")):
            blocks.append(_prompt_block(message.get("role", ""), block, block_tokens(block)))
    return blocks


def input_tokens(body: dict) -> int:
    """Total estimated input tokens of a request (before any cache split)."""
    return sum(block.tokens for block in prompt_blocks(body))


def output_tokens(content: list[dict]) -> int:
    """Estimated output tokens of a reply's content blocks, at least 1."""
    return max(1, sum(block_tokens(block) for block in content))
