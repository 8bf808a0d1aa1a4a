"""Which encoding a text file (CSV/TSV) is in, and a UTF-8 copy when DuckDB cannot read it.

DuckDB reads UTF-8 (with or without a byte order mark) itself; anything else is
decoded here into a UTF-8 copy in the build's scratch folder, a block at a time, so
the copy's lines are the file's and a bad byte stops the copy where it is. Detection
looks at the file's first ``SAMPLE_BYTES`` only:

1. a byte order mark decides (UTF-8, UTF-16 LE/BE as Excel's "Unicode text", UTF-32);
2. a sample that decodes as UTF-8 is UTF-8, "confident" when it holds more than ASCII;
   so is one that holds UTF-8 text before its first byte that is not (a file in two
   encodings, whose import then fails naming that line);
3. otherwise charset-normalizer ranks the encodings people export in that the sample
   could be in: one that reads it as Windows-1252 or Latin-1 does (what spreadsheets
   on Windows write; the cp1250 it often ranks first reads ñ as ń) wins among the
   least chaotic; else its best guess (Windows-1251, Shift-JIS...).

"Western" text is decoded as Windows-1252, the five bytes it leaves undefined as
Latin-1, which reads Latin-1 files too (they only differ in 0x80–0x9F, control
characters no person types).
"""
from __future__ import annotations

import codecs
import contextlib
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from charset_normalizer import from_bytes

from engine.datasets.target import ImportTarget
from shared.errors import MalformedSource

SAMPLE_BYTES = 1 << 20
_BLOCK = 1 << 20
_CHAOS_MARGIN = 0.05
# What files people export are in: the Windows code pages, the East Asian and Cyrillic
# standards. Without this list a short sample goes to DOS or Mac code pages (cp775...).
_CANDIDATES = ["cp1252", "latin_1", "iso8859_15", "cp1250", "cp1251", "cp1253", "cp1254",
               "cp1255", "cp1256", "cp1257", "cp1258", "koi8_r", "cp932", "shift_jis",
               "euc_jp", "gb18030", "big5", "euc_kr", "utf_16"]
_WESTERN_CODECS = ("cp1252", "latin_1")
_ERRORS = "sunrise-latin-1"
_BOMS = ((codecs.BOM_UTF32_LE, "UTF-32", "utf-32"), (codecs.BOM_UTF32_BE, "UTF-32", "utf-32"),
         (codecs.BOM_UTF8, "UTF-8", None), (codecs.BOM_UTF16_LE, "UTF-16", "utf-16"),
         (codecs.BOM_UTF16_BE, "UTF-16", "utf-16"))


@dataclass(frozen=True)
class TextEncoding:
    """``label`` as people know it; ``codec`` the Python codec a UTF-8 copy is made with
    (None: DuckDB reads the file as it is); ``confident`` False when the sample held
    nothing but ASCII, so the rest of the file may still be in another encoding."""

    label: str
    codec: str | None
    confident: bool = True


UTF8 = TextEncoding("UTF-8", None)
WESTERN = TextEncoding("Windows-1252", "cp1252")


def detect_encoding(path: Path) -> TextEncoding:
    """The encoding of the text file at ``path``, from its first ``SAMPLE_BYTES``."""
    with open(path, "rb") as handle:
        sample = handle.read(SAMPLE_BYTES)
        whole = not handle.read(1)
    for bom, label, codec in _BOMS:
        if sample.startswith(bom):
            return TextEncoding(label, codec)
    try:
        codecs.getincrementaldecoder("utf-8")().decode(sample, final=whole)
    except UnicodeDecodeError as exc:
        if not sample[:exc.start].isascii():  # UTF-8 text, then something else: damaged
            return UTF8
        return _ranked(sample)
    return TextEncoding("UTF-8", None, confident=not sample.isascii())


def _ranked(sample: bytes) -> TextEncoding:
    matches = list(from_bytes(sample, cp_isolation=_CANDIDATES))
    if not matches:
        return WESTERN
    least = min(match.chaos for match in matches) + _CHAOS_MARGIN
    for match in matches:
        if match.chaos <= least and set(match.could_be_from_charset) & set(_WESTERN_CODECS):
            return WESTERN
    best = matches[0]
    return TextEncoding(_label(best.encoding), best.encoding)


def _label(codec: str) -> str:
    name = codecs.lookup(codec).name
    if name.startswith("cp125"):
        return f"Windows-{name[2:]}"
    return {"cp932": "Shift-JIS", "shift_jis": "Shift-JIS"}.get(name, name.upper())


class Undecodable(Exception):
    """A byte the file's encoding does not allow: where it is (1-based line, 0-based byte)."""

    def __init__(self, line: int, byte: int) -> None:
        super().__init__(f"line {line}, byte {byte}")
        self.line, self.byte = line, byte


def undecodable(name: str, encoding: TextEncoding, fault: Undecodable) -> MalformedSource:
    """The problem for a file that is not valid in ``encoding``, with the fix."""
    return MalformedSource(
        f"{name} is not valid {encoding.label} near line {fault.line:,} (byte {fault.byte:,}): "
        f"its text is in more than one encoding, or is damaged. Save it as CSV UTF-8 "
        f"(in Excel: File > Save As > CSV UTF-8) and upload it again.",
        source=name, line=fault.line)


@contextlib.contextmanager
def utf8_copy(path: Path, encoding: TextEncoding, target: ImportTarget,
              name: str) -> Iterator[Path]:
    """A UTF-8 copy of ``path`` read in ``encoding`` (removed after the block). The bytes
    the copy adds over the file count against the import's byte cap. Raises
    ``Undecodable`` at a byte the encoding does not allow, ``SourceTooLarge`` (naming
    ``name``) past the cap."""
    copy = target.scratch_file(f"{secrets.token_hex(6)}.utf8{path.suffix}")
    try:
        _transcode(path, encoding, copy, target, name)
        yield copy
    finally:
        copy.unlink(missing_ok=True)


def _transcode(path: Path, encoding: TextEncoding, copy: Path, target: ImportTarget,
               name: str) -> None:
    codec = encoding.codec or "utf-8"
    errors = "strict"
    if encoding == WESTERN:
        codecs.register_error(_ERRORS, _as_latin_1)
        errors = _ERRORS
    decoder = codecs.getincrementaldecoder(codec)(errors)
    read, lines = 0, 0
    with open(path, "rb") as src, open(copy, "w", encoding="utf-8", newline="") as out:
        while True:
            block = src.read(_BLOCK)
            try:
                text = decoder.decode(block, final=not block)
            except UnicodeDecodeError as exc:
                held = len(exc.object) - len(block)  # bytes the decoder kept from before
                good = codecs.getincrementaldecoder(codec)("ignore").decode(exc.object[:exc.start])
                raise Undecodable(lines + good.count("\n") + 1, read - held + exc.start) from None
            out.write(text)
            lines += text.count("\n")
            grown = len(text.encode()) - len(block)
            if grown > 0:
                target.budget.charge_bytes(grown, name)
            read += len(block)
            if not block:
                return


def _as_latin_1(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeDecodeError):
        raise error
    return error.object[error.start:error.end].decode("latin-1"), error.end
