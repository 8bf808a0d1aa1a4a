"""A streamed Messages reply read from its raw server-sent events.

The SDK's ``messages.stream()`` builds a pydantic object for every event and updates
a model snapshot of the whole message after each one; in a worker running hundreds
of conversations that was the largest share of its CPU. Here the SDK still makes the
request -- auth, headers, its retries before the stream starts, its error classes --
and the event bytes of its stream's HTTP response are split and parsed with jiter
into plain dicts. The reply is built as a ``Message`` once, at the end, validated by
the SDK's own model (or, with a block type this SDK does not know, constructed by it:
``Message.model_construct``, as its stream builds each event), so every reader of the
reply sees what ``get_final_message()`` gave. The accumulation follows the SDK's
``accumulate_event`` delta by delta; ``tests/worker/test_message_events.py`` holds
the two equal on the recorded real-API streams and the offline model's.
"""
from __future__ import annotations

import re
import typing
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import anthropic
import httpx2
import pydantic
from anthropic.types import ContentBlock
from jiter import from_json

# Blocks whose ``input`` arrives as ``input_json_delta`` pieces (the SDK's TRACKS_TOOL_INPUT).
TOOL_INPUT_BLOCKS = frozenset({"tool_use", "server_tool_use"})
_EVENT_END = re.compile(rb"\r\n\r\n|\n\n|\r\r")


def _block_classes() -> dict[str, type[pydantic.BaseModel]]:
    # The SDK's content block classes by their ``type``: the members of its ContentBlock
    # union, each with a ``type: Literal[...]`` field.
    union = typing.get_args(ContentBlock)[0]
    return {name: cls for cls in typing.get_args(union)
            for name in typing.get_args(cls.model_fields["type"].annotation)}


BLOCK_CLASSES = _block_classes()


def sse_events(chunks: Iterable[bytes]) -> Iterator[tuple[str, bytes]]:
    """``(event name, data)`` of each server-sent event in the byte ``chunks``."""
    splitter = SseSplitter()
    for chunk in chunks:
        yield from splitter.feed(chunk)
    yield from splitter.end()


class SseSplitter:
    """Splits a byte stream into server-sent events, one network read at a time."""

    def __init__(self) -> None:
        self.pending = b""

    def feed(self, chunk: bytes) -> list[tuple[str, bytes]]:
        """The events this read completes."""
        pending = self.pending + chunk if self.pending else chunk
        if b"\r" in pending:  # CR or CRLF line ends: the general split
            raws, start = [], 0
            for end in _EVENT_END.finditer(pending):
                raws.append(pending[start:end.start()])
                start = end.end()
            self.pending = pending[start:]
            return [event for event in map(_parse_event, raws) if event is not None]
        # LF only, as the API sends: one split in C, and each event of the API's shape
        # ("event: <name>\ndata: <one line>") read in place
        raws = pending.split(b"\n\n")
        self.pending = raws.pop()
        events = []
        for raw in raws:
            head, found, data = raw.partition(b"\ndata: ")
            if found and head[:7] == b"event: " and b"\n" not in data and b"\n" not in head:
                events.append((head[7:].decode(), data))
            elif (event := _parse_event(raw)) is not None:
                events.append(event)
        return events

    def end(self) -> list[tuple[str, bytes]]:
        """The last event, when the stream ended without its blank line."""
        event = _parse_event(self.pending) if self.pending.strip() else None
        self.pending = b""
        return [event] if event is not None else []


def _parse_event(raw: bytes) -> tuple[str, bytes] | None:
    # The API's shape, "event: <name>\ndata: <one line>", without the general walk.
    if raw.startswith(b"event: "):
        head, found, data = raw.partition(b"\ndata: ")
        if found and b"\n" not in data and b"\n" not in head and b"\r" not in raw:
            return head[7:].decode(), data
    name, lines = "", []
    for line in raw.splitlines():
        field, _, value = line.partition(b":")
        if value.startswith(b" "):
            value = value[1:]
        if field == b"event":
            name = value.decode()
        elif field == b"data":
            lines.append(value)
    return (name, b"\n".join(lines)) if name or lines else None


class MessageBuilder:
    """Builds one reply from its events. ``on_text`` gets each piece of answer text as it
    arrives; ``on_block_end`` each content block (a dict) once it is complete."""

    def __init__(self, on_text: Callable[[str], None] = lambda text: None,
                 on_block_end: Callable[[dict], None] = lambda block: None):
        self.on_text = on_text
        self.on_block_end = on_block_end
        self.snapshot: dict | None = None
        self.complete = False  # the message_delta is in: only message_stop follows
        self._json: dict[int, bytes] = {}  # tool input pieces, by block index

    def feed(self, name: str | None, data: dict) -> None:
        """Apply one event (``name`` is its type) to the reply."""
        if self.snapshot is None:
            if name != "message_start":
                raise RuntimeError(f'Unexpected event order, got {name} before "message_start"')
            self.snapshot = data["message"]
            self.snapshot["content"] = list(self.snapshot.get("content") or [])
            return
        content = self.snapshot["content"]
        if name == "content_block_delta":
            self._delta(data["index"], content[data["index"]], data["delta"])
        elif name == "content_block_start":
            content.append(data["content_block"])
        elif name == "content_block_stop":
            index = data["index"]
            self._finish_input(index, content[index])
            self.on_block_end(content[index])
        elif name == "message_delta":
            self._message_delta(data)
            self.complete = True

    def _delta(self, index: int, block: dict, delta: dict) -> None:
        kind, block_type = delta.get("type"), block.get("type")
        if kind == "text_delta" and block_type == "text":
            block["text"] += delta["text"]
            self.on_text(delta["text"])
        elif kind == "input_json_delta" and block_type in TOOL_INPUT_BLOCKS:
            # Parsed once the block is complete, not after every piece.
            self._json[index] = self._json.get(index, b"") + delta["partial_json"].encode()
        elif kind == "thinking_delta" and block_type == "thinking":
            block["thinking"] += delta["thinking"]
        elif kind == "signature_delta" and block_type == "thinking":
            block["signature"] = delta["signature"]
        elif kind == "citations_delta" and block_type == "text":
            block["citations"] = [*(block.get("citations") or []), delta["citation"]]

    def _finish_input(self, index: int, block: dict) -> None:
        buffered = self._json.pop(index, b"")
        if buffered:
            try:
                block["input"] = from_json(buffered, partial_mode=True)
            except ValueError as exc:  # the SDK's words for it
                raise ValueError("Unable to parse tool parameter JSON from model. Please retry "
                                 f"your request or adjust your prompt. Error: {exc}. JSON: "
                                 f"{buffered.decode()}") from exc

    def _message_delta(self, data: dict) -> None:
        snapshot, delta, usage = self.snapshot, data.get("delta") or {}, data.get("usage") or {}
        snapshot["stop_reason"] = delta.get("stop_reason")
        snapshot["stop_sequence"] = delta.get("stop_sequence")
        snapshot["stop_details"] = delta.get("stop_details")
        if delta.get("container") is not None:
            snapshot["container"] = delta["container"]
        totals = snapshot.setdefault("usage", {})
        totals["output_tokens"] = usage.get("output_tokens")
        # Totals so far: they overwrite; a field left out keeps its message_start value.
        for field in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
                      "server_tool_use", "output_tokens_details"):
            if usage.get(field) is not None:
                totals[field] = usage[field]

    def message(self) -> anthropic.types.Message:
        """The reply as the SDK's ``Message``; raises RuntimeError when no event came."""
        if self.snapshot is None:
            raise RuntimeError("the stream ended before its message_start event")
        content = self.snapshot["content"]
        for index, block in enumerate(content):
            self._finish_input(index, block)  # blocks a cut-off stream never closed
        # pydantic-core validates in one pass: ~20x cheaper than the SDK's construction.
        # Each block is validated as the class its type names: the message's content is
        # a union the SDK tells apart by ``type``, which pydantic would try member by
        # member (half of the validation's time); the message then takes them as they are.
        try:
            classes = [BLOCK_CLASSES.get(block.get("type")) if type(block) is dict else None
                       for block in content]
            if all(classes):
                return anthropic.types.Message.model_validate({**self.snapshot, "content": [
                    cls.model_validate(block) for cls, block in zip(classes, content)]})
            return anthropic.types.Message.model_validate(self.snapshot)
        except pydantic.ValidationError:  # a block type this SDK does not know: as its stream
            return anthropic.types.Message.model_construct(**self.snapshot)


def read_message(response: httpx2.Response, builder: MessageBuilder,
                 on_read: Callable[[], None] = lambda: None) -> anthropic.types.Message:
    """Feed the events of a streaming ``response`` to ``builder``; the final message.
    ``on_read`` is called once the events of each network read are fed, until a read
    completes the reply: what that read brought belongs with what the caller does
    with the whole reply, a moment later.

    An ``error`` event raises the SDK's status error for it (status 200: the stream
    had started), exactly as the SDK's own stream does.
    """
    splitter = SseSplitter()
    for chunk in response.iter_bytes():
        _feed(response, builder, splitter.feed(chunk))
        if not builder.complete:
            on_read()
    _feed(response, builder, splitter.end())
    return builder.message()


def _feed(response: httpx2.Response, builder: MessageBuilder,
          events: list[tuple[str, bytes]]) -> None:
    for name, data in events:
        # As the SDK's stream: "ping" and unnamed events are skipped, "error" raises, and
        # any other event is read by the ``type`` in its data (unknown types change nothing).
        if name == "error":
            raise _stream_error(response, data)
        if name and name != "ping" and data:
            event = from_json(data)
            builder.feed(event.get("type"), event)


def _stream_error(response: httpx2.Response, data: bytes) -> anthropic.APIStatusError:
    # The SDK's stream raises its status error for the response's status (200: no status
    # has a class of its own) with the event's data as the body, worded as here.
    body: Any = data.decode(errors="replace")
    try:
        body = from_json(data)
        message = f"{body}"
    except ValueError:
        message = body or f"Error code: {response.status_code}"
    return anthropic.APIStatusError(message, response=response, body=body)
