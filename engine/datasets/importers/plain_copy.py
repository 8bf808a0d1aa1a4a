"""The uncompressed bytes of a text source (CSV, JSON), counted against the import's cap.

A compressed upload (.gz, .zst) is decompressed here, a block at a time, into the
build's scratch folder, counting each block against the import's ``max_bytes``: a
gzip bomb stops at the cap instead of after filling a table with hundreds of millions
of rows (DuckDB reading the .gz itself could not be stopped on bytes). DuckDB then
reads the plain copy, whose byte offsets are the file's own lines. A plain file
counts its size.
"""
from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa

from engine.datasets.importers.base import matching_suffix
from engine.datasets.sources import FileSource
from engine.datasets.target import ImportTarget
from shared.errors import MalformedSource

_CODECS = {".gz": "gzip", ".zst": "zstd"}
_BLOCK = 1 << 20


def compressed(name: str) -> bool:
    """Whether ``name`` ends in a compression suffix this module undoes."""
    return matching_suffix(name, tuple(_CODECS)) is not None


@contextlib.contextmanager
def plain_copy(source: FileSource, target: ImportTarget) -> Iterator[Path]:
    """The path of ``source``'s uncompressed bytes while the block runs (the file itself
    when it is not compressed; else a copy, removed after the block). Raises
    ``SourceTooLarge`` past the import's byte cap, while decompressing, and
    ``MalformedSource`` when the file is not what its suffix says."""
    suffix = matching_suffix(source.name, tuple(_CODECS))
    if suffix is None:
        target.budget.charge_bytes(source.path.stat().st_size, source.name)
        yield source.path
        return
    copy = target.scratch_file(f"{secrets.token_hex(6)}{Path(source.name[: -len(suffix)]).suffix}")
    try:
        _decompress(source, _CODECS[suffix], copy, target)
        yield copy
    finally:
        copy.unlink(missing_ok=True)


def _decompress(source: FileSource, codec: str, copy: Path, target: ImportTarget) -> None:
    try:
        with pa.OSFile(str(source.path)) as raw, \
                pa.CompressedInputStream(raw, codec) as stream, \
                open(copy, "wb") as out:
            while block := stream.read(_BLOCK):
                target.budget.charge_bytes(len(block), source.name)
                out.write(block)
    except (OSError, pa.ArrowInvalid) as exc:
        raise MalformedSource(f"{source.name} could not be decompressed ({codec}): "
                              f"{str(exc).splitlines()[0]}", source=source.name) from None
