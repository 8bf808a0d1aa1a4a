"""Reading a Messages API `messages` list the way the offline model needs to.

The "current question" is the latest user message that is plain text (a string,
or content blocks none of which is a `tool_result`). Everything after it is the
current turn's tool loop: assistant replies and user messages of tool results.
A text block a client adds to the turn after the question (a continuation prompt
after an empty reply) is a "nudge": it answers a reply that left no assistant
message behind.
"""

from __future__ import annotations

from dataclasses import dataclass


def _blocks(content: str | list) -> list[dict]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content if isinstance(block, dict)]


def message_text(message: dict) -> str:
    """The concatenated text blocks of one message."""
    return "\n".join(
        block.get("text", "")
        for block in _blocks(message.get("content", ""))
        if block.get("type") == "text"
    )


def is_plain_user_text(message: dict) -> bool:
    return message.get("role") == "user" and not any(
        block.get("type") == "tool_result" for block in _blocks(message.get("content", ""))
    )


def system_text(system: str | list | None) -> str:
    """The system prompt as one string, whether given as a string or text blocks."""
    if not system:
        return ""
    return "\n".join(
        block.get("text", "") for block in _blocks(system) if block.get("type") == "text"
    )


@dataclass(frozen=True)
class ToolResult:
    tool_use_id: str
    text: str
    is_error: bool


@dataclass(frozen=True)
class Turn:
    """The current question and what has happened since it."""

    question_index: int
    question: str
    assistant_replies: int
    tool_results: list[ToolResult]
    nudges: int = 0

    @property
    def replies_so_far(self) -> int:
        """Replies the model already gave in this turn, including empty ones."""
        return self.assistant_replies + self.nudges


def current_turn(messages: list[dict]) -> Turn | None:
    """The latest plain-text user question and the tool loop after it, if any."""
    for index in range(len(messages) - 1, -1, -1):
        if is_plain_user_text(messages[index]):
            break
    else:
        return None
    later = messages[index + 1 :]
    results = [
        ToolResult(block.get("tool_use_id", ""), _result_text(block), bool(block.get("is_error")))
        for message in later
        if message.get("role") == "user"
        for block in _blocks(message.get("content", ""))
        if block.get("type") == "tool_result"
    ]
    question_blocks = [b for b in _blocks(messages[index].get("content", ""))
                       if b.get("type") == "text"]
    nudges = max(0, len(question_blocks) - 1) + sum(
        1 for message in later if message.get("role") == "user"
        for block in _blocks(message.get("content", "")) if block.get("type") == "text")
    return Turn(
        question_index=index,
        question=question_blocks[0].get("text", "") if question_blocks else "",
        assistant_replies=sum(1 for m in later if m.get("role") == "assistant"),
        tool_results=results,
        nudges=nudges,
    )


def _result_text(block: dict) -> str:
    content = block.get("content", "")
    if isinstance(content, str):
        return content
    return "\n".join(inner.get("text", "") for inner in content if inner.get("type") == "text")


def last_sql(messages: list[dict], tool_name: str = "execute_sql") -> str | None:
    """The SQL of the most recent `tool_name` call anywhere in the conversation."""
    for message in reversed(messages):
        if message.get("role") != "assistant":
            continue
        for block in reversed(_blocks(message.get("content", ""))):
            if block.get("type") == "tool_use" and block.get("name") == tool_name:
                sql = (block.get("input") or {}).get("sql")
                if isinstance(sql, str):
                    return sql
    return None
