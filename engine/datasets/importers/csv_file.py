"""CSV and TSV files (optionally .gz/.zst compressed), read by DuckDB's own ``read_csv``.

DuckDB sniffs the dialect, the header and each column's type, with ``NA``, ``NULL``
and empty cells read as NULL, so a numeric column with missing values stays numeric.
Only ISO dates are read as dates here; other dates, formatted numbers and other
missing markers arrive as text and are read per column afterwards (``meaning``).
The file's first line is the header or the first row (``skip=0``): DuckDB would
otherwise skip leading lines it finds inconsistent, silently losing rows.

Rows DuckDB cannot read are collected (``store_rejects``) rather than aborting the
read, so that the import can tell what went wrong and where:

- a structural fault (a ragged row, an unterminated quote) fails the import with
  the file and line;
- text in another encoding is read from a UTF-8 copy (``text_encoding`` detects it:
  UTF-16 with a byte order mark, Windows-1252/Latin-1, others charset-normalizer
  names); a file whose first megabyte is ASCII but whose later text is not UTF-8 is
  read again as Windows-1252; text not valid in the encoding found fails the import
  naming the line and the fix (save as CSV UTF-8);
- a value that does not fit the type sniffed from a sample (a "n/a" far down an
  integer column) makes DuckDB sniff the whole file, and if a column still does not
  fit, that column is read as text.

A person's layout for the table (``target.layout_for``) moves the header to its line
(``skip``) and leaves the footer's lines out (``text_footer``).

The import's limits hold while reading: a compressed file is decompressed within the
byte cap first (``plain_copy``), the header's columns are counted before any row is
read, and the read stops one row past the rows the import has left.
"""
from __future__ import annotations

import contextlib
import csv
import io
import logging
import re
from dataclasses import dataclass
from pathlib import Path

import duckdb

from engine.datasets.importers.base import NULL_STRINGS, Importer, file_stem, matching_suffix
from engine.datasets.importers.plain_copy import plain_copy
from engine.datasets.importers.text_encoding import (
    SAMPLE_BYTES,
    WESTERN,
    TextEncoding,
    Undecodable,
    detect_encoding,
    undecodable,
    utf8_copy,
)
from engine.datasets.importers.text_footer import copy_head, footer_start
from engine.datasets.naming import quote_ident, sql_literal
from engine.datasets.sources import FileSource
from engine.datasets.target import ImportTarget
from shared.errors import EmptySource, MalformedSource

logger = logging.getLogger(__name__)

_TEXT = (".csv", ".tsv", ".tab", ".txt")
_COMPRESSED = tuple(ext + comp for ext in _TEXT for comp in (".gz", ".zst"))
_REJECTS_KEPT = 100
_BLANK_PROBE_BYTES = 1 << 16
_HEADER_PROBE_BYTES = 1 << 22
_DELIMITERS = (b",", b";", b"\t", b"|")
# DuckDB's type candidates without DOUBLE (see ``_semicolon_separated``).
_NO_DECIMALS = ("BOOLEAN", "BIGINT", "TIME", "DATE", "TIMESTAMP", "VARCHAR")


@dataclass(frozen=True)
class _Reject:
    line: int
    byte_position: int | None
    column: str | None
    error_type: str
    message: str
    csv_line: str | None = None
    delimiter: str | None = None
    quote: str | None = None
    error_byte: int | None = None


class CsvImporter(Importer):
    kind = "csv"
    extensions = _TEXT + _COMPRESSED

    def load(self, source: FileSource, target: ImportTarget) -> None:
        """One table named after the file, laid out as ``target.layout_for`` it says.
        Raises ``EmptySource``, ``MalformedSource`` (a ragged row, text not valid in
        the file's encoding...) or ``SourceTooLarge`` and its kinds (past the import's
        limits)."""
        table = target.table_name(file_stem(source.name))
        layout = target.layout_for(table)
        with plain_copy(source, target) as plain:
            encoding = detect_encoding(plain)
            try:
                self._load_as(source.name, plain, encoding, target, table, layout)
            except Undecodable as fault:
                if encoding.confident:
                    raise undecodable(source.name, encoding, fault) from None
                # Only ASCII in the sample: the first byte past it that is not UTF-8
                # says the file is what spreadsheets on Windows write.
                logger.info("%s is not UTF-8 past its first %s bytes (line %s); reading "
                            "it as %s", source.name, SAMPLE_BYTES, fault.line, WESTERN.label)
                target.drop_table(table)
                self._load_as(source.name, plain, WESTERN, target, table, layout)
        _note_layout(target, table, layout)

    def _load_as(self, name: str, plain: Path, encoding: TextEncoding, target: ImportTarget,
                 table: str, layout: dict) -> None:
        """Read ``plain`` in ``encoding``; raises ``Undecodable`` where it is not."""
        with contextlib.ExitStack() as stack:
            path = plain
            if encoding.codec is not None:
                logger.info("%s is %s; reading a UTF-8 copy", name, encoding.label)
                try:
                    path = stack.enter_context(utf8_copy(plain, encoding, target, name))
                except Undecodable as fault:
                    raise undecodable(name, encoding, fault) from None
            if layout["skip_footer"]:
                path = copy_head(path, footer_start(path, layout["skip_footer"], name), target)
                stack.callback(path.unlink, missing_ok=True)
            self._load(FileSource(path, name), target, table, layout["header_row"])

    def _load(self, source: FileSource, target: ImportTarget, table: str,
              header_row: int | None) -> None:
        _refuse_blank(source)
        # DuckDB would read every date of the file with one day/month order it guesses
        # from a sample; only ISO dates here, the rest is read per column from all its
        # values after the import (engine/datasets/meaning).
        options: dict = {"nullstr": NULL_STRINGS, "skip": 0, "dateformat": "%Y-%m-%d"}
        if header_row is not None:
            options.update(skip=header_row - 1, header=True)
        if matching_suffix(source.name, (".tsv", ".tab", ".tsv.gz", ".tab.gz",
                                         ".tsv.zst", ".tab.zst")):
            options["delim"] = "\t"
        as_text: dict[str, str] = {}
        header = _header_line(source, options["skip"])
        _check_header(source, target, options, header)
        if _semicolon_separated(source, target, options, header):
            # Where ";" separates fields the comma is the decimal separator, and DuckDB
            # would read "1.500" (fifteen hundred) as 1.5: decimals arrive as text and
            # are read per column, with the file's other columns deciding (``meaning``).
            options["auto_type_candidates"] = _NO_DECIMALS
        while True:
            rejects = self._read(source, target, table, {**options, **_types(as_text)})
            if not rejects:
                break
            target.drop_table(table)
            first = rejects[0]
            if "ENCODING" in first.error_type:
                raise Undecodable(_physical_line(source, first),
                                  int(first.error_byte or first.byte_position or 0))
            structural = [r for r in rejects if r.error_type != "CAST"]
            if structural:
                raise _malformed(source, structural[0])
            if "sample_size" not in options:
                options["sample_size"] = -1
                continue
            new = {r.column for r in rejects if r.column and r.column not in as_text}
            if not new:
                raise _malformed(source, first)
            logger.info("%s: reading columns %s as text (%s)", source.name, sorted(new),
                        first.message)
            as_text.update(dict.fromkeys(new, "VARCHAR"))
        target.finish_table(table, source.name)

    def _read(self, source: FileSource, target: ImportTarget, table: str,
              options: dict) -> list[_Reject]:
        """CREATE the table from the file; the rows DuckDB rejected, first line first."""
        suffix = f"{table}_{len(target.tables)}"
        rejects, scans = f"sunrise_rejects_{suffix}", f"sunrise_reject_scans_{suffix}"
        args = ", ".join([sql_literal(str(source.path)), *_render(options),
                          "store_rejects = true", f"rejects_table = {sql_literal(rejects)}",
                          f"rejects_scan = {sql_literal(scans)}",
                          f"rejects_limit = {_REJECTS_KEPT}"])
        con = target.con
        # One row past what the import may still hold: enough to tell, and DuckDB stops there.
        limit = target.budget.rows_left + 1
        with target.watch(table):
            con.execute(f"CREATE TABLE {quote_ident(table)} AS SELECT * FROM read_csv({args}) "
                        f"LIMIT {limit}")
        try:
            rows = con.execute(
                "SELECT r.line, r.line_byte_position, r.column_name, "
                "CAST(r.error_type AS VARCHAR), r.error_message, r.csv_line, s.delimiter, "
                f"s.quote, r.byte_position FROM {quote_ident(rejects)} r LEFT JOIN {quote_ident(scans)} s "
                f"USING (scan_id) ORDER BY r.line LIMIT {_REJECTS_KEPT}").fetchall()
        finally:
            con.execute(f"DROP TABLE IF EXISTS {quote_ident(rejects)}")
            con.execute(f"DROP TABLE IF EXISTS {quote_ident(scans)}")
        return [_Reject(int(line), *rest) for line, *rest in rows]


def _note_layout(target: ImportTarget, table: str, layout: dict) -> None:
    """Say in the table's description which lines a person's layout left out."""
    header_row, footer = layout["header_row"], layout["skip_footer"]
    if header_row and header_row > 1:
        above = "1 line" if header_row == 2 else f"{header_row - 1:,} lines"
        target.note_table(table, f"Header on line {header_row:,}, as set for this table; "
                                 f"{above} above it left out.")
    if footer:
        lines = "1 line" if footer == 1 else f"{footer:,} lines"
        target.note_table(table, f"{lines} at the end left out, as set for this table.")


def _check_header(source: FileSource, target: ImportTarget, options: dict,
                  header: bytes) -> None:
    """Count the header's columns before any row is read, on its first line: the most
    fields it splits into on any delimiter DuckDB would sniff, never fewer than DuckDB
    finds (DuckDB's sniffer itself takes gigabytes for 20,000 columns). ``finish_table``
    counts the table's columns again; no second sniff of the file is needed for that."""
    target.limits.check_columns(_first_line_width(header, options.get("delim")), source.name)


def _semicolon_separated(source: FileSource, target: ImportTarget, options: dict,
                         header: bytes) -> bool:
    """Whether DuckDB splits the file's fields on ";" (asked only when its header has one)."""
    if "delim" in options or b";" not in header:
        return False
    args = ", ".join([sql_literal(str(source.path)), *_render(options)])
    try:
        (delimiter,) = target.con.execute(f"SELECT Delimiter FROM sniff_csv({args})").fetchone()
    except duckdb.Error:  # the read says what is wrong
        return False
    return delimiter == ";"


def _header_line(source: FileSource, skip: int) -> bytes:
    """The first line read after ``skip`` lines (within the first ``_HEADER_PROBE_BYTES``;
    the last line there is, if the file has fewer), without its newline."""
    lines, left = [], _HEADER_PROBE_BYTES
    with open(source.path, "rb") as handle:
        while len(lines) <= skip and left > 0 and (line := handle.readline(left)):
            lines.append(line)
            left -= len(line)
    return lines[-1].removesuffix(b"\n") if lines else b""


def _first_line_width(line: bytes, delim: str | None) -> int:
    """The most fields ``line`` splits into on any delimiter DuckDB would sniff (outside
    double quotes): never fewer than DuckDB finds."""
    unquoted = b"".join(line.split(b'"')[::2])
    candidates = [delim.encode()] if delim else _DELIMITERS
    return 1 + max(unquoted.count(d) for d in candidates)


def _refuse_blank(source: FileSource) -> None:
    with open(source.path, "rb") as handle:
        head = handle.read(_BLANK_PROBE_BYTES)
    if not head.strip() and len(head) < _BLANK_PROBE_BYTES:
        raise EmptySource(f"{source.name} is empty: it has no header and no rows.",
                          source=source.name)


def _malformed(source: FileSource, reject: _Reject) -> MalformedSource:
    line = _physical_line(source, reject)
    if reject.error_type in ("TOO MANY COLUMNS", "MISSING COLUMNS") and (
            ragged := _ragged(reject, line)):
        return MalformedSource(f"{source.name}, {ragged}", source=source.name, line=line)
    where = f"column {reject.column}: " if reject.error_type == "CAST" and reject.column else ""
    return MalformedSource(f"{source.name}, line {line}: {where}{reject.message}",
                           source=source.name, line=line)


def _ragged(reject: _Reject, line: int) -> str | None:
    """"line 7 has 5 fields; the header has 4": the row's own count (DuckDB's message
    counts only as far as it read), split as DuckDB sniffed the file."""
    expected = re.search(r"Expected Number of Columns: (\d+)", reject.message)
    fields = _field_count(reject)
    if expected is None or fields is None:
        return None
    return (f"line {line} has {fields} field{'s' * (fields != 1)}; the header has "
            f"{expected[1]}. Every row needs one value per column (a value holding the "
            f"delimiter must be in double quotes).")


def _field_count(reject: _Reject) -> int | None:
    if reject.csv_line is None or not reject.delimiter or len(reject.delimiter) != 1:
        return None
    quoted = reject.quote is not None and len(reject.quote) == 1
    reader = csv.reader(io.StringIO(reject.csv_line), delimiter=reject.delimiter,
                        quotechar=reject.quote if quoted else '"',
                        quoting=csv.QUOTE_MINIMAL if quoted else csv.QUOTE_NONE)
    try:
        return len(next(reader))
    except (csv.Error, StopIteration):
        return None


def _physical_line(source: FileSource, reject: _Reject) -> int:
    """The 1-based line of the file where the rejected row starts.

    DuckDB counts rows, which differs from lines when a quoted value spans lines;
    its byte position of the row is exact, so count the newlines before it (in the
    plain copy of a compressed file, whose lines are the file's).
    """
    if reject.byte_position is None:
        return reject.line
    remaining, newlines = int(reject.byte_position), 0
    with open(source.path, "rb") as handle:
        while remaining > 0:
            block = handle.read(min(remaining, 1 << 20))
            if not block:
                break
            newlines += block.count(b"\n")
            remaining -= len(block)
    return newlines + 1


def _types(as_text: dict[str, str]) -> dict:
    return {"types": as_text} if as_text else {}


def _render(options: dict) -> list[str]:
    return [f"{name} = {_value(value)}" for name, value in options.items()]


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(map(_value, value)) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{sql_literal(k)}: {_value(v)}" for k, v in value.items()) + "}"
    return sql_literal(str(value))
