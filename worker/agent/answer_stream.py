"""Pulls the growing ``answerText`` out of a JSON answer while it is still being written."""
from __future__ import annotations

from collections.abc import Callable

import jiter


class AnswerStreamer:
    """Feed text deltas of one reply; :meth:`flush` calls ``emit(text_so_far)`` when
    answerText has grown since the last call.

    Only replies that look like a JSON object (optionally inside a ```json fence) are
    parsed; anything else is left to the recovery chain at the end. Feeding only
    buffers: the text is parsed when the caller is about to send it (the job's events
    are due, or the reply is complete), so what leaves is the newest text there is and
    a read that sends nothing parses nothing.
    """

    def __init__(self, emit: Callable[[str], None]):
        self._emit = emit
        self._buf: list[str] = []
        self._sent = ""
        self._fed = False  # text arrived since the last parse
        self._gave_up = False

    def feed(self, delta: str) -> None:
        if not self._gave_up:
            self._buf.append(delta)
            self._fed = True

    def flush(self) -> None:
        if not self._fed:
            return
        self._fed = False
        text = self._current_answer()
        if text is not None and text != self._sent:
            self._sent = text
            self._emit(text)

    def _current_answer(self) -> str | None:
        raw = "".join(self._buf).lstrip()
        if len(raw) < 3 and "```".startswith(raw):
            return None  # nothing yet, or maybe the start of a fence: wait for more
        if raw.startswith("```"):
            raw = raw.partition("\n")[2].lstrip()
        if not raw:
            return None
        if not raw.startswith("{"):
            self._gave_up = True
            self._buf.clear()
            return None
        try:
            parsed = jiter.from_json(raw.encode(), partial_mode="trailing-strings")
        except ValueError:
            return None
        answer = parsed.get("answerText") if isinstance(parsed, dict) else None
        return answer if isinstance(answer, str) else None
