"""Minimal validation of Messages API request bodies, with the real API's error shape.

Checked: `model` (non-empty string), `max_tokens` (integer >= 1, messages only),
`messages` (non-empty list of `user`/`assistant` messages whose content is a
string or a list of blocks, starting with `user` and alternating), `system`
(string or list of blocks), `tools` (list of objects with a `name`). As on the
real API, no message but a final assistant one may be empty, and no text block
may be empty or whitespace. Anything wrong raises `ApiError(400)`
(`invalid_request_error`) with a message naming the field, as the real API's
messages do. The per-model rules (thinking, effort, sampling, `tool_choice`...)
are `model_rules`'.
"""

from __future__ import annotations

from sunrise.fake_llm.errors import ApiError


def _fail(message: str) -> None:
    raise ApiError(400, message)


def validate_messages(body: object, *, require_max_tokens: bool = True) -> dict:
    """Return `body` if it is a usable Messages request; raise ApiError(400) otherwise."""
    if not isinstance(body, dict):
        _fail("request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        _fail("model: Field required")
    if require_max_tokens:
        max_tokens = body.get("max_tokens")
        if max_tokens is None:
            _fail("max_tokens: Field required")
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
            _fail("max_tokens: must be an integer greater than or equal to 1")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        _fail("messages: at least one message is required")
    previous = None
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            _fail(f"messages.{index}: must be an object")
        role = message.get("role")
        if role not in ("user", "assistant"):
            _fail(f"messages.{index}.role: Input should be 'user' or 'assistant'")
        content = message.get("content")
        if not isinstance(content, (str, list)):
            _fail(
                f"messages.{index}.content: Field required (a string or a list of content blocks)"
            )
        if isinstance(content, list) and not all(
            isinstance(block, dict) and isinstance(block.get("type"), str) for block in content
        ):
            _fail(f"messages.{index}.content: every content block needs a 'type'")
        _check_not_empty(index, content, last=index == len(messages) - 1 and role == "assistant")
        if index == 0 and role != "user":
            _fail('messages: first message must use the "user" role')
        if role == previous:
            _fail(
                f'messages: roles must alternate between "user" and "assistant", '
                f'but found multiple "{role}" roles in a row (messages.{index})'
            )
        previous = role
    system = body.get("system")
    if system is not None and not isinstance(system, (str, list)):
        _fail("system: Input should be a string or a list of text blocks")
    tools = body.get("tools")
    if tools is not None and not (
        isinstance(tools, list) and all(isinstance(t, dict) and t.get("name") for t in tools)
    ):
        _fail("tools: Input should be a list of tool definitions, each with a 'name'")
    return body


def _check_not_empty(index: int, content: str | list, *, last: bool) -> None:
    if not content and not last:
        _fail(f"messages.{index}: all messages must have non-empty content except for the "
              "optional final assistant message")
    if isinstance(content, str):
        if content and not content.strip() and not last:
            _fail(f"messages.{index}.content: text content blocks must contain non-whitespace text")
        return
    for position, block in enumerate(content):
        if block["type"] == "text" and not str(block.get("text", "")).strip():
            _fail(f"messages.{index}.content.{position}.text: text content blocks must contain "
                  "non-whitespace text")
