"""Safe, unique SQL identifiers for the tables and columns of an imported dataset.

A name a user gave ("Orders 2024.csv", "Amount ($)", "Straße") becomes an identifier
the model can write without quotes: lower case ASCII letters, digits and ``_``,
starting with a letter or ``_``, at most 63 characters, never one of DuckDB's
reserved words (those get a trailing ``_``), and unique case-insensitively within
its scope (``_2``, ``_3``... on a clash).
"""
from __future__ import annotations

import functools
import re
import unicodedata

import duckdb

MAX_LENGTH = 63
_NOT_WORD = re.compile(r"[^a-z0-9]+")
# Latin letters that Unicode does not decompose into an ASCII letter plus accents.
_SPELLED_OUT = str.maketrans({"ß": "ss", "æ": "ae", "Æ": "AE", "ø": "o", "Ø": "O", "œ": "oe",
                              "Œ": "OE", "ł": "l", "Ł": "L", "đ": "d", "Đ": "D", "þ": "th",
                              "Þ": "TH", "ð": "d", "Ð": "D", "ı": "i"})


@functools.cache
def reserved_words() -> frozenset[str]:
    """Words DuckDB's parser will not take as a bare column or table name (``order``,
    ``left``); its ``column_name`` keywords (``time``, ``values``) are fine there."""
    con = duckdb.connect()
    try:
        rows = con.execute("SELECT keyword_name FROM duckdb_keywords() "
                           "WHERE keyword_category IN ('reserved', 'type_function')").fetchall()
    finally:
        con.close()
    return frozenset(word.lower() for (word,) in rows)


def sanitise(name: str, fallback: str = "data") -> str:
    """``name`` as a safe identifier (see the module docstring), ``fallback`` if nothing is left."""
    spelled = unicodedata.normalize("NFKD", name.translate(_SPELLED_OUT))
    ascii_name = spelled.encode("ascii", "ignore").decode()
    cleaned = _NOT_WORD.sub("_", ascii_name.lower()).strip("_") or fallback
    if cleaned[0].isdigit():
        cleaned = f"{fallback[0]}_{cleaned}"
    cleaned = cleaned[:MAX_LENGTH].rstrip("_")
    if cleaned in reserved_words():
        cleaned += "_"
    return cleaned


def quote_ident(name: str) -> str:
    """``name`` as a double-quoted SQL identifier (any text is safe inside)."""
    return '"' + name.replace('"', '""') + '"'


def sql_literal(text: str) -> str:
    """``text`` as a single-quoted SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


class NameBook:
    """Hands out unique safe identifiers within one scope (a database, or one table's columns)."""

    def __init__(self, taken: set[str] | None = None) -> None:
        self._taken = {name.lower() for name in taken or ()}

    def claim(self, wanted: str, fallback: str = "data") -> str:
        """The safe form of ``wanted``, numbered if that is taken; remembers it as taken."""
        base = sanitise(wanted, fallback)
        name, number = base, 1
        while name in self._taken:
            number += 1
            suffix = f"_{number}"
            name = base[: MAX_LENGTH - len(suffix)] + suffix
        self._taken.add(name)
        return name
