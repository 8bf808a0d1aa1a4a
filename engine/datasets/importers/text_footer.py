"""Leaving out the last lines of a text file (a CSV's footer a person said is not data).

DuckDB's ``read_csv`` can skip lines at the top but not at the end, and a footer
("Total;;1.234", "Exported by ...") would change the columns' types or fail the read
as a ragged row. So the file's lines before the footer are copied into the build's
scratch folder, a block at a time, and DuckDB reads the copy, whose lines are the
file's own.
"""
from __future__ import annotations

import secrets
from pathlib import Path

from engine.datasets.target import ImportTarget
from shared.errors import MalformedSource

_BLOCK = 1 << 20
# The footer is read from the end into memory: at most this much of it.
MAX_FOOTER_BYTES = 16 << 20


def footer_start(path: Path, lines: int, name: str) -> int:
    """The byte offset where the last ``lines`` non-blank lines of ``path`` begin (the
    file's size for 0, 0 when the file has no more lines). Reads from the end a block at
    a time; raises ``MalformedSource`` naming ``name`` when those lines pass
    ``MAX_FOOTER_BYTES``."""
    pos = path.stat().st_size
    if lines <= 0:
        return pos
    found, pending = 0, b""  # pending: the file's bytes [pos, pos + len) not yet counted
    with open(path, "rb") as handle:
        while True:
            newline = pending.rfind(b"\n", 0, len(pending) - 1)
            if newline < 0:
                if pos == 0:
                    return 0
                if len(pending) > MAX_FOOTER_BYTES:
                    raise MalformedSource(
                        f"{name}: the last {lines:,} rows to leave out hold more than "
                        f"{MAX_FOOTER_BYTES >> 20} MB; is skip_footer right?", source=name)
                start = max(pos - _BLOCK, 0)
                handle.seek(start)
                pending = handle.read(pos - start) + pending
                pos = start
                continue
            line, pending = pending[newline + 1:], pending[:newline + 1]
            if line.strip():
                found += 1
                if found == lines:
                    return pos + newline + 1


def copy_head(path: Path, end: int, target: ImportTarget) -> Path:
    """A scratch copy of ``path``'s first ``end`` bytes, made a block at a time (the
    caller removes it)."""
    copy = target.scratch_file(f"{secrets.token_hex(6)}{path.suffix}")
    remaining = end
    with open(path, "rb") as src, open(copy, "wb") as out:
        while remaining > 0 and (block := src.read(min(remaining, _BLOCK))):
            out.write(block)
            remaining -= len(block)
    return copy
