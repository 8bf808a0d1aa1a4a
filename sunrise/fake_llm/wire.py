"""Byte-level encoding of Messages API responses: JSON bodies, SSE events, ids.

The SSE framing copies the recorded streams in `testdata/anthropic-sdk-fixtures`:
an `event: <type>` line, a `data: <compact JSON>` line, a blank line. The ping is
literally `data: {"type": "ping"}` (with the space) as the real service sends it,
right after the first `content_block_start` when that block has deltas (the
recorded refusal, whose only block is empty, has no ping). A tool's input is streamed as an
empty `input_json_delta` followed by several chunks of `json.dumps(input)`, never
split inside an escape sequence so every prefix parses in partial mode. A
thinking block starts empty (`"thinking": "", "signature": ""`), streams its
text as `thinking_delta`s and ends with one `signature_delta`, as the recorded
`stream-a-*.sse` do.
"""

from __future__ import annotations

import json
import os
import re

_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
PING = b'event: ping\ndata: {"type": "ping"}\n\n'
WORDS_PER_TEXT_DELTA = 4
CHARS_PER_JSON_DELTA = 24


def json_bytes(obj: object) -> bytes:
    """Compact UTF-8 JSON, the way the real API writes bodies and SSE data."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def _base62(nbytes: int) -> str:
    number = int.from_bytes(os.urandom(nbytes), "big")
    digits = []
    while number:
        number, rem = divmod(number, 62)
        digits.append(_ALPHABET[rem])
    return "".join(digits) or "0"


def new_id(prefix: str) -> str:
    """A random id shaped like the real ones: `msg_01…`, `toolu_01…`, `req_01…`."""
    return f"{prefix}_01{_base62(16)}"


def new_request_id() -> str:
    return new_id("req")


def sse_event(event: str, data: dict) -> bytes:
    """One framed SSE event."""
    return b"event: " + event.encode() + b"\ndata: " + json_bytes(data) + b"\n\n"


def text_chunks(text: str) -> list[str]:
    """Split text into a few words per delta; joining the chunks gives `text` back."""
    pieces = re.findall(r"\s*\S+|\s+$", text)
    return [
        "".join(pieces[i : i + WORDS_PER_TEXT_DELTA])
        for i in range(0, len(pieces), WORDS_PER_TEXT_DELTA)
    ]


def json_chunks(payload: str) -> list[str]:
    """Split serialized JSON into chunks, never inside a backslash escape."""
    unsafe: set[int] = set()
    i = 0
    while i < len(payload):
        if payload[i] == "\\":
            length = 6 if payload[i + 1 : i + 2] == "u" else 2
            unsafe.update(range(i + 1, i + length))
            i += length
        else:
            i += 1
    chunks, start = [], 0
    while start < len(payload):
        end = min(start + CHARS_PER_JSON_DELTA, len(payload))
        while end in unsafe:
            end += 1
        chunks.append(payload[start:end])
        start = end
    return chunks


def _empty_block(block: dict) -> dict:
    if block["type"] == "text":
        return {"type": "text", "text": ""}
    if block["type"] == "tool_use":
        return {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
    if block["type"] == "thinking":
        return {"type": "thinking", "thinking": "", "signature": ""}
    return block


def _deltas(index: int, block: dict) -> list[bytes]:
    if block["type"] == "text":
        deltas = [{"type": "text_delta", "text": chunk} for chunk in text_chunks(block["text"])]
    elif block["type"] == "tool_use":
        payload = json.dumps(block["input"], ensure_ascii=False)
        deltas = [{"type": "input_json_delta", "partial_json": ""}]
        deltas += [{"type": "input_json_delta", "partial_json": c} for c in json_chunks(payload)]
    elif block["type"] == "thinking":
        deltas = [{"type": "thinking_delta", "thinking": chunk}
                  for chunk in text_chunks(block["thinking"])]
        deltas.append({"type": "signature_delta", "signature": block["signature"]})
    else:
        deltas = []
    return [
        sse_event(
            "content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}
        )
        for d in deltas
    ]


def stream_events(message: dict) -> list[tuple[str, bytes]]:
    """The full SSE event sequence for a finished `message`, as (type, bytes) pairs.

    Usage in `message_start` carries the input side and `output_tokens: 1`;
    `message_delta` carries the cumulative totals, as the real service does.
    """
    usage = message["usage"]
    start = dict(message, content=[], stop_reason=None, stop_sequence=None, stop_details=None)
    start["usage"] = dict(usage, output_tokens=1)
    events = [
        ("message_start", sse_event("message_start", {"type": "message_start", "message": start}))
    ]
    for index, block in enumerate(message["content"]):
        events.append(
            (
                "content_block_start",
                sse_event(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": _empty_block(block),
                    },
                ),
            )
        )
        deltas = _deltas(index, block)
        if index == 0 and deltas:
            events.append(("ping", PING))
        events += [("content_block_delta", delta) for delta in deltas]
        events.append(
            (
                "content_block_stop",
                sse_event("content_block_stop", {"type": "content_block_stop", "index": index}),
            )
        )
    delta_usage = {
        key: usage[key]
        for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    }
    delta_usage["output_tokens"] = usage["output_tokens"]
    delta_usage["output_tokens_details"] = usage["output_tokens_details"]
    events.append(
        (
            "message_delta",
            sse_event(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {
                        "stop_reason": message["stop_reason"],
                        "stop_sequence": message["stop_sequence"],
                        "stop_details": message.get("stop_details"),
                    },
                    "usage": delta_usage,
                },
            ),
        )
    )
    events.append(("message_stop", sse_event("message_stop", {"type": "message_stop"})))
    return events


def cut_for_stream_error(events: list[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    """Keep the stream up to the middle of the first block, then an `error` event.

    Mirrors a real mid-stream overload: the client has already seen
    `message_start` and part of the text when the error arrives.
    """
    first_stop = next(
        (i for i, (kind, _) in enumerate(events) if kind == "content_block_stop"), len(events) - 2
    )
    head = events[:first_stop]
    deltas = [i for i, (kind, _) in enumerate(head) if kind == "content_block_delta"]
    if len(deltas) > 1:
        head = head[: deltas[len(deltas) // 2]]
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    return [*head, ("error", sse_event("error", error))]
