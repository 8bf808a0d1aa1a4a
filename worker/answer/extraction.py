"""Recover ``{"answerText": str, "charts": [...]}`` from the model's final text.

The model is asked for bare JSON but sometimes wraps it in prose or a code
fence. The recovery chain, first success wins, never raising:

1. ``direct``   -- the whole (stripped) text parses as the answer object;
2. ``fenced``   -- a fenced block (`````json`` or bare ```````) anywhere does;
3. ``anchored`` -- from a match of ``\\{\\s*"answerText"`` anywhere, a string- and
   escape-aware brace walk finds the matching ``}`` and that slice does.
   Anchoring on the key rather than on any ``{`` is what makes this safe:
   ``{{chart:N}}`` tokens and braces in prose never start with ``"answerText"``;
4. ``raw``      -- the stripped text itself becomes the answer, with no charts.

Prose removed around the JSON in paths 2-3 is returned in ``stripped_prose``
and logged as a warning, so recurring phrasings can be fed back into the
prompt. ``stop_reason == "max_tokens"`` skips all of this: see
``truncated_answer``.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any

logger = logging.getLogger(__name__)

TRUNCATED_ANSWER = (
    "The answer was cut off because it ran too long. Please ask a narrower question, "
    "e.g. one carrier, one airport or one month at a time, or a top 10 instead of a full list."
)

_FENCE = re.compile(r"```[ \t]*(?:json)?[ \t]*\r?\n?(.*?)```", re.DOTALL | re.IGNORECASE)
_ANCHOR = re.compile(r'\{\s*"answerText"')
# Only these characters change the walk's state; everything else is skipped.
_WALK_TOKENS = re.compile(r'[{}"\\]')
# Each failed anchor may walk to the end of the text; cap the quadratic worst case.
_MAX_ANCHORS = 25
_PROSE_LOG_CHARS = 200


@dataclass(frozen=True)
class ExtractedAnswer:
    """What the user will see: the answer text, raw chart specs and how it was found."""

    answer_text: str
    charts: list[dict] = field(default_factory=list)
    parse_path: str = "raw"
    stripped_prose: list[str] = field(default_factory=list)
    # {"question": str, "options": [str, ...]} when the model asks instead of guessing.
    clarify: dict | None = None


def truncated_answer() -> ExtractedAnswer:
    """The canned answer for ``stop_reason == "max_tokens"`` (no extraction)."""
    return ExtractedAnswer(TRUNCATED_ANSWER, [], "truncated", [])


def extract_answer(text: str) -> ExtractedAnswer:
    """Recover the answer object from ``text`` by the chain in the module doc.

    Never raises, whatever ``text`` holds (non-strings are converted). Side
    effect: a warning log line per piece of stripped prose.
    """
    try:
        if not isinstance(text, str):
            text = text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)
        return _extract(text)
    except Exception:  # the contract is "never raises"
        logger.exception("answer extraction failed unexpectedly; using the raw text")
        try:
            return ExtractedAnswer(_clean(str(text).strip()), [], "raw", [])
        except Exception:
            logger.exception("the raw text could not be used either; answering empty")
            return ExtractedAnswer("", [], "raw", [])


def _extract(text: str) -> ExtractedAnswer:
    stripped = text.strip().lstrip("\ufeff")
    found = _accept(stripped)
    if found is not None:
        return _answer(found, "direct", [])
    for match in _FENCE.finditer(text):
        found = _accept(match.group(1).strip())
        if found is not None:
            return _answer(found, "fenced", _prose(text[: match.start()], text[match.end():]))
    for tried, match in enumerate(_ANCHOR.finditer(text)):
        if tried >= _MAX_ANCHORS:
            logger.warning("gave up after %d answerText anchors", _MAX_ANCHORS)
            break
        end = find_matching_brace(text, match.start())
        if end is None:
            continue
        found = _accept(text[match.start(): end + 1])
        if found is not None:
            return _answer(found, "anchored", _prose(text[: match.start()], text[end + 1:]))
    return ExtractedAnswer(_clean(stripped), [], "raw", [])


def find_matching_brace(text: str, start: int) -> int | None:
    """Index of the ``}`` closing the ``{`` at ``text[start]``, or None.

    Braces inside JSON string literals do not count, and a backslash inside a
    string escapes the next character (so ``\\"`` does not end the string).
    """
    if start >= len(text) or text[start] != "{":
        return None
    depth = 0
    in_string = False
    skip_to = -1
    for token in _WALK_TOKENS.finditer(text, start):
        index = token.start()
        if index < skip_to:
            continue
        char = token.group()
        if in_string:
            if char == "\\":
                skip_to = index + 2
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index
    return None


def _accept(candidate: str) -> dict | None:
    """The parsed object if it is a dict with a string ``answerText``, else None."""
    if not candidate.startswith("{"):
        return None
    try:
        value = json.loads(candidate)
    except (ValueError, RecursionError):
        return None
    if isinstance(value, dict) and isinstance(value.get("answerText"), str):
        return value
    return None


def _answer(obj: dict, path: str, prose: list[str]) -> ExtractedAnswer:
    raw_charts: Any = obj.get("charts")
    charts: list[dict] = []
    # All or nothing: filtering out odd entries would shift the positions that
    # {{chart:N}} tokens refer to, binding text to the wrong chart.
    if isinstance(raw_charts, list) and all(isinstance(chart, dict) for chart in raw_charts):
        charts = raw_charts
    elif raw_charts is not None:
        logger.warning("ignored charts: expected a list of objects, got %s",
                       type(raw_charts).__name__)
    for piece in prose:
        shown = piece if len(piece) <= _PROSE_LOG_CHARS else piece[:_PROSE_LOG_CHARS] + "…"
        logger.warning("stripped prose around the %s answer JSON: %r", path, shown)
    return ExtractedAnswer(_clean(obj["answerText"]), charts, path, prose,
                           clarification(obj.get("clarify")))


MAX_OPTIONS = 6


def clarification(raw: Any) -> dict | None:
    """The answer's ``clarify`` if well formed (a question and 2-6 distinct, non-empty
    options), else None (logged): a malformed one must not cost the answer."""
    if raw is None:
        return None
    options = raw.get("options") if isinstance(raw, dict) else None
    question = raw.get("question") if isinstance(raw, dict) else None
    if (isinstance(question, str) and question.strip() and isinstance(options, list)
            and all(isinstance(o, str) and o.strip() for o in options)):
        kept = list(dict.fromkeys(_clean(o.strip()) for o in options))[:MAX_OPTIONS]
        if len(kept) >= 2:
            return {"question": _clean(question.strip()), "options": kept}
    logger.warning("ignored clarify: expected a question and 2-%d text options", MAX_OPTIONS)
    return None


def _prose(before: str, after: str) -> list[str]:
    return [_clean(piece.strip()) for piece in (before, after) if piece.strip()]


def _clean(value: str) -> str:
    """Replace lone surrogates (legal in JSON escapes, illegal in UTF-8) with U+FFFD."""
    return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
