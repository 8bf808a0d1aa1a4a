"""How much text may go where, and how it is cut: one place for every such bound.

Text that comes from outside -- a DuckDB error message, model-written SQL, an
answer -- has no length of its own and may even hold lone surrogates (JSON allows
``"\\ud800"``). Stored as is, it fails the write every time: MariaDB refuses a value
longer than its column (1406) and the driver cannot encode a lone surrogate. So it
is cut to the column, and made encodable, before it is written.
"""
from __future__ import annotations

import re

# A MariaDB TEXT column holds 65,535 bytes: 16,383 characters of four bytes each.
TEXT_COLUMN_CHARS = 16_000
# An error message shown to the model or a person: its first lines say what went wrong.
ERROR_CHARS = 2_000

# In a Python str every surrogate code point is a lone one: decoders pair the others.
_SURROGATE = re.compile("[\ud800-\udfff]")


def clip(text: str, limit: int) -> str:
    """``text`` if it has at most ``limit`` characters, else its first ``limit`` and a
    note of how many were cut (so nobody mistakes the cut text for the whole)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit:,} more characters cut]"


def storable(text: str | None, limit: int | None = TEXT_COLUMN_CHARS) -> str | None:
    """``text`` made safe to write: lone surrogates replaced by U+FFFD and, unless
    ``limit`` is None (a LONGTEXT column), clipped to ``limit`` characters."""
    if text is None:
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = _SURROGATE.sub("\ufffd", text)
    return text if limit is None else clip(text, limit)
