"""Pulls the growing ``answerText`` out of a JSON answer while it is still being written."""
from __future__ import annotations

import time
from collections.abc import Callable

import jiter


class AnswerStreamer:
    """Feed text deltas of one content block; calls ``emit(text_so_far)`` as answerText grows.

    Only replies that look like a JSON object (optionally inside a ```json fence) are
    parsed; anything else is left to the recovery chain at the end. Emission is throttled
    to one call per ``min_interval_s`` except for :meth:`flush`.
    """

    def __init__(self, emit: Callable[[str], None], *, min_interval_s: float = 0.05):
        self._emit = emit
        self._min_interval_s = min_interval_s
        self._buf: list[str] = []
        self._sent = ""
        self._last_emit = 0.0
        self._gave_up = False

    def feed(self, delta: str) -> None:
        if self._gave_up:
            return
        self._buf.append(delta)
        if time.monotonic() - self._last_emit >= self._min_interval_s:
            self._push()

    def flush(self) -> None:
        if not self._gave_up:
            self._push()

    def _push(self) -> None:
        text = self._current_answer()
        if text is not None and text != self._sent:
            self._sent = text
            self._last_emit = time.monotonic()
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
            return None
        try:
            parsed = jiter.from_json(raw.encode(), partial_mode="trailing-strings")
        except ValueError:
            return None
        answer = parsed.get("answerText") if isinstance(parsed, dict) else None
        return answer if isinstance(answer, str) else None
