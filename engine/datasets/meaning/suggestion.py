"""The re-type offered for a text column that looks like numbers or dates but was not
converted (a few stray values, an ambiguous reading, forms mixed): ``{"type", "format",
"label"}``, as ``ColumnProfile.suggestion`` carries it to the console, whose one click
asks for exactly that re-type (and shows the row that does not read, if one does not).

The format is one of the vocabulary's (``formats``); the label is what the offer says.
"""
from __future__ import annotations

from engine.datasets.meaning import numbers

_WORDS = {"DATE": "date", "TIMESTAMP": "date and time"}


def number_suggestion(convention: numbers.Convention, sql_type: str, *, percent: bool = False,
                      scaled: bool = False) -> dict:
    """Re-type as ``sql_type`` read with ``convention`` (and its percent/multiplier forms)."""
    separator = "decimal point" if convention.decimal == "." else "decimal comma"
    return {"type": sql_type,
            "format": numbers.format_name(convention, percent=percent, scaled=scaled),
            "label": f"looks like numbers ({separator}) — treat as number?"}


def date_suggestion(formats: list[str], sql_type: str) -> dict:
    """Re-type as ``sql_type`` read with ``formats`` (strptime formats, one per shape)."""
    word = _WORDS.get(sql_type, "date")
    return {"type": sql_type, "format": " | ".join(formats),
            "label": f"looks like a {word} ({' or '.join(formats)}) — treat as {word}?"}
