"""How large an Excel workbook is once read, measured before the Excel reader sees it.

python-calamine builds each sheet as one dense grid spanning the used range of its
non-empty cells: a 1.5 KB workbook with cells A1 and XFD1048576 asks it for 549 GB
(Rust aborts the whole process), A1:Z1000000 for 1.07 GB. So every part of the
workbook's zip is read here first, streamed, and the workbook is refused when:

- a sheet's used range (rows × columns of its non-empty cells, as calamine counts
  them) or the number of cells it lists passes ``max_sheet_cells``
  (``SheetTooLarge``), or it is wider than ``max_columns`` (``TooManyColumns``);
- its shared-string table declares or holds more strings than ``max_sheet_cells``
  (calamine reserves the declared count up front);
- the zip's uncompressed bytes pass what the import has left (``SourceTooLarge``);
- a part that holds cells or strings is not well-formed XML, or declares a DTD (XML
  entity bombs; a workbook never needs one) (``MalformedSource``).

Each part's bytes are inflated from the zip's own compressed data, not trusted from its
declared size, so a part cannot claim to be small. The ``<dimension ref>`` a sheet
declares is read but not trusted: calamine sizes its grid from the cells.
"""
from __future__ import annotations

import re
import struct
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pyexpat import ExpatError, ParserCreate

from engine.datasets.limits import ImportBudget, ImportLimits
from engine.datasets.sources import FileSource
from shared.errors import MalformedSource, SheetTooLarge

_BLOCK = 1 << 20
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")
_CELL_REF = re.compile(r"^\$?([A-Za-z]{1,3})\$?(\d{1,7})$")
# Bytes that mark a part calamine reads for cells or strings (whatever the prefix).
_MARKERS = re.compile(rb"sheetData|[<:]sst\b")
_ANY_CELL = re.compile(rb"<(?:[\w.-]+:)?c[\s/>]")
_FIRST_REF = re.compile(rb"""<(?:[\w.-]+:)?c\s+r\s*=\s*["']\$?([A-Za-z]{1,3})\$?(\d{1,7})["']""")
_SST_COUNT = re.compile(rb"""<(?:[\w.-]+:)?sst\b[^>]*?\suniqueCount\s*=\s*["']([^"']*)["']""")
_PREFIXED_SI = re.compile(rb"<[\w.-]+:si[\s/>]")


class _Refused(Exception):
    """Raised inside an expat handler to stop the parse."""


class _XmlCheck:
    """Feeds a part's blocks to expat (a DTD refused) and notes whether the part holds
    cells or strings; ``finish`` raises MalformedSource if such a part is not well-formed.
    After the first failure the parser is fed no more: the part is refused at ``finish``."""

    def __init__(self, parser) -> None:
        parser.StartDoctypeDeclHandler = parser.EntityDeclHandler = _refuse_dtd
        self.parser = parser
        self.failure: Exception | None = None
        self.marked = False
        self._tail = b""

    def feed(self, block: bytes) -> None:
        self.marked = self.marked or bool(_MARKERS.search(self._tail + block))
        self._tail = block[-16:]
        if self.failure is None:
            try:
                self.parser.Parse(block, False)
            except (ExpatError, _Refused) as exc:
                self.failure = exc

    def finish(self, source: FileSource, sheet: str) -> None:
        if self.failure is None:
            try:
                self.parser.Parse(b"", True)
            except (ExpatError, _Refused) as exc:
                self.failure = exc
        # A part without cells or strings (an image, a VML drawing) may be anything.
        if self.failure is not None and (self.marked or isinstance(self.failure, _Refused)):
            raise MalformedSource(f"{source.name} is not a readable Excel workbook: part "
                                  f"{sheet} is not well-formed XML ({self.failure}).",
                                  source=source.name)


@dataclass
class _Extent:
    """The cells of one part (a sheet) as calamine places them."""

    cells: int = 0
    first_row: int | None = None
    last_row: int = 0
    first_col: int | None = None
    last_col: int = 0
    dimension: str = ""

    def add(self, row: int, col: int) -> None:
        self.cover(row, row, col, col, 1)

    def cover(self, first_row: int, last_row: int, first_col: int, last_col: int,
              cells: int) -> None:
        """Widen the extent to these rows and columns, counting ``cells`` more."""
        self.cells += cells
        self.first_row = first_row if self.first_row is None else min(self.first_row, first_row)
        self.first_col = first_col if self.first_col is None else min(self.first_col, first_col)
        self.last_row, self.last_col = max(self.last_row, last_row), max(self.last_col, last_col)

    @property
    def rows(self) -> int:
        return 0 if self.first_row is None else self.last_row - self.first_row + 1

    @property
    def columns(self) -> int:
        return 0 if self.first_col is None else self.last_col - self.first_col + 1

    @property
    def range(self) -> str:
        if self.first_row is None:
            return ""
        return (f"{_column_name(self.first_col)}{self.first_row + 1}:"
                f"{_column_name(self.last_col)}{self.last_row + 1}")


def check_workbook(source: FileSource, limits: ImportLimits, budget: ImportBudget) -> None:
    """Measure every part of the workbook's zip; raise (see the module docstring) before
    anything would allocate more than the limits allow."""
    try:
        with zipfile.ZipFile(source.path) as archive:
            infos = [info for info in archive.infolist() if not info.is_dir()]
            sheets = _sheet_names(archive)
    except (zipfile.BadZipFile, OSError) as exc:
        raise MalformedSource(f"{source.name} is not a readable Excel workbook: {exc}",
                              source=source.name) from None
    with open(source.path, "rb") as handle:
        for info in infos:
            name = sheets.get(info.filename, info.filename)
            if not _measure_quickly(source, name, _inflate(source, handle, info, budget),
                                    limits):
                # Cells without references: walk them as calamine does (its bytes again).
                _check_part(source, name, _inflate(source, handle, info, ImportBudget(limits)),
                            limits)


def _measure_quickly(source: FileSource, sheet: str, blocks: Iterator[bytes],
                     limits: ImportLimits) -> bool:
    """Measure a part with expat checking the XML in C and a pattern placing each cell by
    its reference (an element handler per cell would cost seconds per million cells).
    Every ``<c>`` tag counts, with or without a value. The reference must be the tag's
    first attribute, as every writer puts it: well-formed XML (expat's check) then has
    no other ``r`` and no ``<`` in a value to mislead the pattern. False when some cell
    is written otherwise, so that only walking the rows can place it."""
    extent, strings = _Extent(), 0
    xml, carry = _XmlCheck(ParserCreate()), b""
    for block in blocks:
        xml.feed(block)
        text, carry = _whole_tags(carry + block)
        if len(carry) > _BLOCK:
            xml.failure = xml.failure or _Refused("a tag longer than 1 MB")
            carry = b""
        refs = _FIRST_REF.findall(text)
        if len(refs) != len(_ANY_CELL.findall(text)):
            return False
        if refs:
            rows = [int(digits) for _, digits in refs]
            columns = [_column_index(letters) for letters in {letters for letters, _ in refs}]
            extent.cover(min(rows) - 1, max(rows) - 1, min(columns), max(columns), len(refs))
            _check_extent(source, sheet, extent, limits)
        for declared in _SST_COUNT.finditer(text):
            _check_strings(source, declared.group(1).decode("ascii", "replace") or "0", limits)
        strings += text.count(b"<si>") + text.count(b"<si ") + len(_PREFIXED_SI.findall(text))
        _check_strings(source, str(strings), limits)
    xml.finish(source, sheet)
    return True


def _whole_tags(data: bytes) -> tuple[bytes, bytes]:
    """``data`` up to its last complete tag, and the rest (a tag cut by the block)."""
    start = data.rfind(b"<")
    if start == -1 or data.find(b">", start) != -1:
        return data, b""
    return data[:start], data[start:]


def _refuse_dtd(*_args) -> None:
    raise _Refused("it declares a DTD")


def _check_part(source: FileSource, sheet: str, blocks: Iterator[bytes],
                limits: ImportLimits) -> None:
    extent = _Extent()
    state = {"sheet_data": False, "row": 0, "col": 0, "cell": None, "valued": False,
             "strings": 0}
    parser = ParserCreate()

    def start(tag: str, attrs: dict) -> None:
        local = tag.rsplit(":", 1)[-1]
        if state["cell"] is not None:
            state["valued"] = True  # a value, inline string or formula: calamine keeps it
        elif local == "sheetData":
            state["sheet_data"] = True
        elif not state["sheet_data"]:
            if local == "dimension":
                extent.dimension = attrs.get("ref", "")
            elif local == "sst":
                _check_strings(source, attrs.get("uniqueCount", "0"), limits)
        elif local == "row":
            if "r" in attrs:
                state["row"] = _number(attrs["r"], source, sheet) - 1
        elif local == "c":
            if "r" in attrs:
                state["row"], state["col"] = _cell(attrs["r"], source, sheet)
            state["cell"], state["valued"] = (state["row"], state["col"]), False

    def end(tag: str) -> None:
        local = tag.rsplit(":", 1)[-1]
        if local == "c" and state["cell"] is not None:
            if state["valued"]:
                extent.add(*state["cell"])
                _check_extent(source, sheet, extent, limits)
            state["cell"] = None
            state["col"] += 1
        elif local == "row" and state["cell"] is None:
            state["row"] += 1
            state["col"] = 0
        elif local == "sheetData":
            state["sheet_data"] = False
        elif local == "si":
            state["strings"] += 1
            _check_strings(source, str(state["strings"]), limits)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    xml = _XmlCheck(parser)
    for block in blocks:
        xml.feed(block)
    xml.finish(source, sheet)


def _check_extent(source: FileSource, sheet: str, extent: _Extent, limits: ImportLimits) -> None:
    if extent.rows * extent.columns > limits.max_sheet_cells or \
            extent.cells > limits.max_sheet_cells:
        raise SheetTooLarge(
            f"{source.name}, sheet {sheet}: its used range {extent.range} spans "
            f"{extent.rows:,} rows × {extent.columns:,} columns "
            f"({extent.rows * extent.columns:,} cells, {extent.cells:,} listed); the limit "
            f"is {limits.max_sheet_cells:,} cells per sheet (SUNRISE_IMPORT_MAX_SHEET_CELLS).",
            source=source.name, sheet=sheet, limit=limits.max_sheet_cells)
    limits.check_columns(extent.columns, source.name, f"sheet {sheet} ({extent.range})")


def _check_strings(source: FileSource, count: str, limits: ImportLimits) -> None:
    if not count.isdigit() or int(count) > limits.max_sheet_cells:
        raise SheetTooLarge(
            f"{source.name}: its shared-string table declares or holds {count} strings; the "
            f"limit is {limits.max_sheet_cells:,} (SUNRISE_IMPORT_MAX_SHEET_CELLS).",
            source=source.name, limit=limits.max_sheet_cells)


def _inflate(source: FileSource, handle, info: zipfile.ZipInfo,
             budget: ImportBudget) -> Iterator[bytes]:
    """The part's bytes, inflated from its compressed data (its declared size is not
    trusted), each block counted against the import's byte budget."""
    if info.flag_bits & 0x1 or info.compress_type not in (zipfile.ZIP_STORED,
                                                          zipfile.ZIP_DEFLATED):
        raise MalformedSource(f"{source.name} is not a readable Excel workbook: part "
                              f"{info.filename} is encrypted or compressed in a way Excel "
                              "does not use.", source=source.name)
    handle.seek(info.header_offset)
    header = handle.read(_LOCAL_HEADER.size)
    if len(header) != _LOCAL_HEADER.size or header[:4] != b"PK\x03\x04":
        raise MalformedSource(f"{source.name} is not a readable Excel workbook: part "
                              f"{info.filename} has no local header.", source=source.name)
    name_length, extra_length = _LOCAL_HEADER.unpack(header)[-2:]
    handle.seek(info.header_offset + _LOCAL_HEADER.size + name_length + extra_length)
    inflater = zlib.decompressobj(-15) if info.compress_type == zipfile.ZIP_DEFLATED else None
    left = info.compress_size
    while left > 0:
        raw = handle.read(min(left, _BLOCK))
        if not raw:
            break
        left -= len(raw)
        try:
            data = raw if inflater is None else inflater.decompress(raw, _BLOCK)
            while data:
                budget.charge_bytes(len(data), source.name)
                yield data
                if inflater is None or not inflater.unconsumed_tail:
                    break
                data = inflater.decompress(inflater.unconsumed_tail, _BLOCK)
        except zlib.error as exc:
            raise MalformedSource(f"{source.name} is not a readable Excel workbook: part "
                                  f"{info.filename}: {exc}", source=source.name) from None


def _sheet_names(archive: zipfile.ZipFile) -> dict[str, str]:
    """Part path → sheet name, best effort (for messages only: every part is checked)."""
    names: dict[str, str] = {}
    try:
        workbook = archive.read("xl/workbook.xml").decode("utf-8", "replace")
        rels = archive.read("xl/_rels/workbook.xml.rels").decode("utf-8", "replace")
    except (KeyError, zipfile.BadZipFile, OSError, zlib.error):
        return names
    targets = {}
    for rel in re.finditer(r"<(?:\w+:)?Relationship\b([^>]*)>", rels):
        attrs = _attributes(rel.group(1))
        targets[attrs.get("Id", "")] = attrs.get("Target", "")
    for sheet in re.finditer(r"<(?:\w+:)?sheet\b([^>]*)>", workbook):
        attrs = _attributes(sheet.group(1))
        rel = next((v for k, v in attrs.items() if k.rsplit(":", 1)[-1] == "id"), None)
        target = targets.get(rel or "")
        if target and "name" in attrs:
            path = target.lstrip("/") if target.startswith("/") else f"xl/{target}"
            names[path] = attrs["name"]
    return names


def _attributes(text: str) -> dict[str, str]:
    return dict(re.findall(r'([\w:]+)\s*=\s*"([^"]*)"', text))


def _number(text: str, source: FileSource, sheet: str) -> int:
    if not text.isdigit() or not 0 < int(text) <= 1 << 31:
        raise MalformedSource(f"{source.name}, sheet {sheet}: {text!r} is not a row number.",
                              source=source.name)
    return int(text)


def _cell(ref: str, source: FileSource, sheet: str) -> tuple[int, int]:
    """A cell reference ("B7") as calamine's 0-based (row, column)."""
    match = _CELL_REF.match(ref)
    if match is None:
        raise MalformedSource(f"{source.name}, sheet {sheet}: {ref!r} is not a cell "
                              "reference.", source=source.name)
    return _number(match.group(2), source, sheet) - 1, _column_index(match.group(1))


def _column_index(letters: str | bytes) -> int:
    """A column's letters ("B", b"AA") as calamine's 0-based index."""
    col = 0
    for letter in letters.upper() if isinstance(letters, str) else letters.decode().upper():
        col = col * 26 + ord(letter) - ord("A") + 1
    return col - 1


def _column_name(index: int) -> str:
    name, index = "", index + 1
    while index:
        index, rest = divmod(index - 1, 26)
        name = chr(ord("A") + rest) + name
    return name
