"""What the loop does with each reply: every stop reason has one defined outcome.

From https://platform.claude.com/docs/en/build-with-claude/handling-stop-reasons:

- ``tool_use``: run the tools, send the results back;
- ``pause_turn``: send the assistant content back as it is, the model continues;
- ``end_turn`` / ``stop_sequence``: the answer. An empty one (no content, or only
  whitespace or thinking) is documented to happen after tool results; sending it
  back unchanged does not help, so the documented last resort is used once: a
  continuation prompt in the user turn. A second empty reply fails the job
  ``empty_answer`` (an empty answer is never stored);
- ``max_tokens`` and ``model_context_window_exceeded``: a cut-off reply, answered
  with the canned truncated answer (no extraction);
- ``refusal``: the job fails ``refused``, carrying what the model said.

Shared by the streaming loop and economy mode, so both end a reply the same way.
"""
from __future__ import annotations

import enum
from typing import Any

from shared.errors import JobFailure

CONTINUE_PROMPT = ("Please continue: finish the task and reply with the JSON answer "
                   "described in the system prompt.")
TRUNCATED = ("max_tokens", "model_context_window_exceeded")


class Next(enum.Enum):
    RUN_TOOLS = "run_tools"
    CONTINUE = "continue"  # pause_turn: send the content back
    ANSWER = "answer"
    TRUNCATED = "truncated"
    EMPTY = "empty"


def next_step(message: Any) -> Next:
    """What to do after ``message``; raises JobFailure for a refusal or an unknown stop."""
    stop = message.stop_reason
    if stop == "tool_use":
        return Next.RUN_TOOLS
    if stop == "pause_turn":
        return Next.CONTINUE
    if stop in TRUNCATED:
        return Next.TRUNCATED
    if stop in ("end_turn", "stop_sequence"):
        return Next.ANSWER if answer_text(message).strip() else Next.EMPTY
    if stop == "refusal":
        raise JobFailure("refused", refusal_message(message))
    raise JobFailure("llm_unexpected_stop", f"The model stopped unexpectedly ({stop}).")


def answer_text(message: Any) -> str:
    """The reply's text blocks joined (thinking blocks are never part of the answer)."""
    return "".join(block.text for block in message.content if block.type == "text")


def refusal_message(message: Any) -> str:
    said = answer_text(message).strip()
    details = getattr(message, "stop_details", None)
    explanation = getattr(details, "explanation", None) if details is not None else None
    parts = ["The model declined to answer this question."]
    if said:
        parts.append(f"It said: {said}")
    if explanation:
        parts.append(f"({explanation})")
    return " ".join(parts)


def empty_answer() -> JobFailure:
    return JobFailure("empty_answer", "The model ended its turn twice without an answer; "
                      "try rephrasing the question.")


def with_continuation(messages: list[dict]) -> list[dict]:
    """``messages`` plus the continuation prompt, in the user turn the model just ended on.

    The API merges consecutive user turns, so adding the prompt to the last user
    message is what a separate user message would be; the role order stays valid.
    """
    last = messages[-1]
    prompt = {"type": "text", "text": CONTINUE_PROMPT}
    if last["role"] != "user":
        return [*messages, {"role": "user", "content": [prompt]}]
    content = last["content"]
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
    return [*messages[:-1], {**last, "content": [*blocks, prompt]}]


def as_params(content: list[Any]) -> list[dict]:
    """The assistant's content blocks as request params, for the rest of this job.

    Thinking blocks (and redacted ones) go back exactly as received, signature and
    all: the API refuses a tool continuation whose thinking was dropped or edited.
    Text blocks that are empty or whitespace are dropped: the API refuses them.
    """
    params = []
    for block in content:
        if block.type == "text":
            if block.text.strip():
                params.append({"type": "text", "text": block.text})
        elif block.type == "thinking":
            params.append({"type": "thinking", "thinking": block.thinking,
                           "signature": block.signature})
        elif block.type == "redacted_thinking":
            params.append({"type": "redacted_thinking", "data": block.data})
        elif block.type == "tool_use":
            params.append({"type": "tool_use", "id": block.id, "name": block.name,
                           "input": block.input})
        else:
            params.append(block.model_dump(exclude_none=True))
    return params


def thinking_texts(content: list[Any]) -> list[str]:
    """The non-empty thinking summaries of a reply, in order."""
    return [block.thinking for block in content
            if block.type == "thinking" and block.thinking.strip()]
