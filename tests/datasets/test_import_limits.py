"""Hostile files (issue 31 items 3, 5, 6 and 10), each made by real tooling, stop at the
import's limits with an error naming the file and the limit.

Where the code before the limits allocated without bound, the import runs in a child
process with an address-space limit (``in_child``), so that code could only ever fail
that child, never the test process.
"""
from __future__ import annotations

import gzip
import json
import resource
import sqlite3
import subprocess
import sys
import zipfile
from pathlib import Path

import duckdb
import openpyxl
import pytest

from engine.datasets import FileSource
from engine.datasets.limits import ImportLimits
from shared.errors import (
    MalformedSource,
    SheetTooLarge,
    SourceTooLarge,
    TooManyColumns,
    TooManyRows,
)
from tests.datasets.conftest import files_under, query
from tests.utils.dataset_files import duckdb_file

CHILD_ADDRESS_SPACE = 3 * 2**30
_CHILD = """
import json, sys
from engine.datasets import FileSource, build_version
from engine.datasets.limits import ImportLimits
paths, data_dir, limits = json.loads(sys.argv[1])
kwargs = {"limits": ImportLimits(**limits)} if limits else {}
try:
    built = build_version([FileSource(p) for p in paths], data_dir, "ds", 1, **kwargs)
    print(json.dumps({"ok": [t.name for t in built.tables]}))
except Exception as exc:
    print(json.dumps({"error": type(exc).__name__, "detail": str(exc)}))
"""


def in_child(paths: list[Path], data_dir: Path, **limits) -> dict:
    """Import ``paths`` in a child process under ``CHILD_ADDRESS_SPACE``: its answer
    (``{"ok": tables}`` or ``{"error", "detail"}``), or how it died."""
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (CHILD_ADDRESS_SPACE, CHILD_ADDRESS_SPACE))

    done = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps([[str(p) for p in paths], str(data_dir),
                                                   limits])],
        capture_output=True, text=True, preexec_fn=cap, timeout=300, check=False)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        return {"died": done.returncode, "stderr": done.stderr[-500:]}
    return json.loads(lines[-1])


# -- Excel: the used range is measured before calamine allocates it --------------------

def _corners(path: Path, far: str) -> Path:
    book = openpyxl.Workbook()
    book.active.title = "Wide"
    book.active["A1"] = "a"
    book.active[far] = 1
    book.save(path)
    return path


@pytest.mark.parametrize("far", ["XFD1048576", "Z1000000"])
def test_a_tiny_workbook_with_a_huge_used_range_is_refused(tmp_path, data_dir, far):
    """A1 and XFD1048576 (1.5 KB) made calamine ask for 549 GB (Rust aborted the
    worker); A1:Z1000000 took 1.07 GB."""
    path = _corners(tmp_path / "corners.xlsx", far)
    assert path.stat().st_size < 10_000
    answer = in_child([path], data_dir)
    assert answer.get("error") == "SheetTooLarge", answer
    assert answer["detail"].startswith(f"corners.xlsx, sheet Wide: its used range A1:{far}")
    assert "SUNRISE_IMPORT_MAX_SHEET_CELLS" in answer["detail"]
    assert files_under(data_dir / "ds") == []


def _workbook(path: Path, sheet_xml: str, strings_xml: str | None = None) -> Path:
    """A minimal .xlsx written by hand: the parts calamine reads, nothing else."""
    ns = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types xmlns="http://schemas.'
                   'openxmlformats.org/package/2006/content-types"/>')
        z.writestr("_rels/.rels", f'<Relationships xmlns="http://schemas.openxmlformats.org/'
                   f'package/2006/relationships"><Relationship Id="rId1" Type="{rel}/'
                   'officeDocument" Target="xl/workbook.xml"/></Relationships>')
        z.writestr("xl/workbook.xml", f'<workbook xmlns="{ns}" xmlns:r="{rel}"><sheets>'
                   '<sheet name="Data" sheetId="1" r:id="rId1"/></sheets></workbook>')
        z.writestr("xl/_rels/workbook.xml.rels", f'<Relationships xmlns="http://schemas.'
                   f'openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" '
                   f'Type="{rel}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>')
        z.writestr("xl/worksheets/sheet1.xml", f'<worksheet xmlns="{ns}">{sheet_xml}</worksheet>')
        if strings_xml is not None:
            z.writestr("xl/sharedStrings.xml", strings_xml)
    return path


def test_a_hand_written_workbook_within_the_budget_imports(tmp_path, build):
    path = _workbook(tmp_path / "small.xlsx", '<sheetData><row r="1"><c r="A1" t="inlineStr">'
                     '<is><t>n</t></is></c></row><row r="2"><c r="A2"><v>7</v></c></row>'
                     '</sheetData>')
    built = build(path, limits=ImportLimits(max_sheet_cells=4))
    assert query(built.path, "SELECT n FROM small") == [(7,)]


def test_cells_listed_over_and_over_count_against_the_budget(tmp_path, build):
    """Calamine keeps every listed cell before placing it: one cell written a million
    times is a million cells, whatever the used range."""
    cells = '<c r="A1"><v>1</v></c>' * 50
    path = _workbook(tmp_path / "repeat.xlsx", f'<sheetData><row r="1">{cells}</row></sheetData>')
    with pytest.raises(SheetTooLarge, match=r"repeat\.xlsx, sheet Data: .*50 listed"):
        build(path, limits=ImportLimits(max_sheet_cells=49))


def test_cells_without_references_are_placed_as_calamine_places_them(tmp_path, build):
    row = "<row>" + "<c><v>1</v></c>" * 12 + "</row>"
    path = _workbook(tmp_path / "implicit.xlsx", f"<sheetData>{row * 3}</sheetData>")
    with pytest.raises(TooManyColumns, match=r"implicit\.xlsx, sheet Data \(A1:K1\) has 11 "
                                             r"columns; the limit is 10"):
        build(path, limits=ImportLimits(max_columns=10))


def test_a_shared_string_table_declaring_billions_is_refused(tmp_path, build):
    """Calamine reserves the declared count up front (the same abort as a huge range)."""
    strings = ('<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
               'uniqueCount="4000000000"><si><t>a</t></si></sst>')
    path = _workbook(tmp_path / "strings.xlsx", '<sheetData><row r="1"><c r="A1" t="s"><v>0'
                     '</v></c></row></sheetData>', strings)
    with pytest.raises(SheetTooLarge, match=r"strings\.xlsx: its shared-string table declares "
                                            r"or holds 4000000000 strings"):
        build(path)


def test_a_workbook_part_with_a_dtd_is_refused(tmp_path, build):
    sheet = ('<!DOCTYPE w [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;">]>'
             '<sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>&b;</t></is></c></row>'
             '</sheetData>')
    path = tmp_path / "dtd.xlsx"
    _workbook(path, "")
    with zipfile.ZipFile(path, "a") as z:  # a second sheet part, the DTD first
        z.writestr("xl/worksheets/sheet2.xml", sheet)
    with pytest.raises(MalformedSource, match=r"dtd\.xlsx is not a readable Excel workbook: "
                                              r"part xl/worksheets/sheet2\.xml .*DTD"):
        build(path)


def test_a_sheet_that_is_not_well_formed_is_refused(tmp_path, build):
    """Calamine does not check end tags: a mismatched one could hide cells from a
    measure that stopped at it, so the workbook is refused."""
    path = _workbook(tmp_path / "tags.xlsx", '<sheetData><row r="1"><c r="A1"><v>1</v></c>'
                     '</rowx><row r="2"><c><v>1</v></c></row></sheetData>')
    with pytest.raises(MalformedSource, match=r"tags\.xlsx .*not well-formed XML"):
        build(path)


def test_a_workbook_part_that_lies_about_its_size_is_measured_by_its_bytes(tmp_path, build):
    """The bytes counted are the ones inflated, not the size the zip declares."""
    path = _workbook(tmp_path / "liar.xlsx", "<sheetData>" + '<row><c><v>1</v></c></row>' * 4000
                     + "</sheetData>")
    raw = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as z:
        info = z.getinfo("xl/worksheets/sheet1.xml")
    name = info.filename.encode()
    central = next(i for i in range(len(raw)) if raw[i:i + 4] == b"PK\x01\x02"
                   and raw[i + 46:i + 46 + len(name)] == name)
    raw[central + 24:central + 28] = (100).to_bytes(4, "little")  # declared size: 100 bytes
    path.write_bytes(bytes(raw))
    with pytest.raises(SourceTooLarge, match=r"liar\.xlsx: this import's sources hold more "
                                             r"than 50,000 bytes"):
        build(path, limits=ImportLimits(max_bytes=50_000))


# -- DuckDB files: generated columns, and compressed values under a memory limit --------

def test_a_duckdb_file_with_a_generated_column_is_refused(tmp_path, data_dir):
    """2,000 rows of repeat('x', 1000000) in 536 KB took the worker to 4.17 GB."""
    path = duckdb_file(tmp_path / "gen.duckdb",
                        "CREATE TABLE t (x INTEGER, y VARCHAR GENERATED ALWAYS AS "
                        "(repeat('x', 1000000)))",
                        "INSERT INTO t (x) SELECT range FROM range(2000)")
    assert path.stat().st_size < 2**20
    answer = in_child([path], data_dir)
    assert answer.get("error") == "UnsupportedSource", answer
    assert answer["detail"].startswith("gen.duckdb, table main.t: generated columns cannot be "
                                       "imported (y)")


def test_compressed_values_in_a_duckdb_file_stop_at_the_memory_limit(tmp_path, data_dir):
    """Stored values compress as well: 300 MB of text in well under 1 MB."""
    path = duckdb_file(tmp_path / "packed.duckdb", "CREATE TABLE t AS SELECT range AS x, "
                        "repeat('x', 1000000) AS y FROM range(300)")
    assert path.stat().st_size < 2**20
    answer = in_child([path], data_dir, source_memory_limit="64MB")
    assert answer.get("error") == "SourceTooLarge", answer
    assert answer["detail"].startswith("packed.duckdb, table main.t: reading it needs more "
                                       "than 64MB of memory")


def test_an_uploaded_duckdb_file_is_read_with_its_limits(tmp_path, build):
    path = duckdb_file(tmp_path / "fine.duckdb", "CREATE TABLE t AS SELECT range AS x "
                        "FROM range(10)")
    built = build(path, limits=ImportLimits(source_memory_limit="64MB"))
    assert query(built.path, "SELECT count(*) FROM t") == [(10,)]


# -- compressed text: bytes and rows counted while reading -------------------------------

def test_a_gzip_bomb_stops_at_the_byte_limit(tmp_path, data_dir, build):
    """2 MB of .csv.gz became 537 million rows; the upload limit counts compressed bytes."""
    path = tmp_path / "bomb.csv.gz"
    with gzip.open(path, "wb", compresslevel=9) as out:
        out.write(b"n\n")
        for _ in range(64):
            out.write(b"1\n" * 2**19)  # 64 MB uncompressed
    assert path.stat().st_size < 2**20
    with pytest.raises(SourceTooLarge, match=r"bomb\.csv\.gz: this import's sources hold more "
                                             r"than 8 MB of uncompressed data, the limit per "
                                             r"import \(SUNRISE_IMPORT_MAX_BYTES\)"):
        build(path, limits=ImportLimits(max_bytes=8 * 2**20))
    assert files_under(data_dir / "ds") == []


@pytest.mark.parametrize("name", ["rows.csv.gz", "rows.ndjson.gz", "rows.csv"])
def test_rows_past_the_limit_stop_the_read(tmp_path, build, name):
    path = tmp_path / name
    body = ("n\n" + "1\n" * 1000) if ".csv" in name else '{"n": 1}\n' * 1000
    path.write_bytes(gzip.compress(body.encode()) if name.endswith(".gz") else body.encode())
    with pytest.raises(TooManyRows, match=rf"{name}: this import holds more than 999 rows"):
        build(path, limits=ImportLimits(max_rows=999))
    assert build(path, version=2, limits=ImportLimits(max_rows=1000)).rows == 1000


def test_the_row_limit_counts_every_table_of_the_import(tmp_path, build):
    first, second = tmp_path / "a.csv", tmp_path / "b.sqlite"
    first.write_text("n\n" + "1\n" * 6)
    con = sqlite3.connect(second)
    con.execute("CREATE TABLE t (n INTEGER)")
    con.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(5)])
    con.commit()
    con.close()
    with pytest.raises(TooManyRows, match=r"b\.sqlite: this import holds more than 10 rows"):
        build(first, second, limits=ImportLimits(max_rows=10))


def test_a_compressed_file_that_is_not_compressed_is_refused(tmp_path, build):
    path = tmp_path / "plain.csv.gz"
    path.write_text("n\n1\n")
    with pytest.raises(MalformedSource, match=r"plain\.csv\.gz could not be decompressed"):
        build(path)


# -- columns: one cap per table, checked on the header or schema -----------------------

def _wide(tmp_path: Path, kind: str, width: int) -> Path:
    names = [f"c{i}" for i in range(width)]
    if kind == "csv":
        path = tmp_path / "wide.csv"
        path.write_text(",".join(names) + "\n" + ",".join("1" * width) + "\n")
    elif kind == "json":
        path = tmp_path / "wide.json"
        path.write_text(json.dumps([dict.fromkeys(names, 1)]))
    elif kind == "xlsx":
        path = tmp_path / "wide.xlsx"
        book = openpyxl.Workbook()
        book.active.append(names)
        book.active.append([1] * width)
        book.save(path)
    elif kind == "sqlite":
        path = tmp_path / "wide.sqlite"
        con = sqlite3.connect(path)
        con.execute(f"CREATE TABLE t ({', '.join(names)})")
        con.commit()
        con.close()
    else:
        path = tmp_path / f"wide.{kind}"
        select = ", ".join(f"1 AS {n}" for n in names)
        if kind == "parquet":
            duckdb.connect().execute(f"COPY (SELECT {select}) TO '{path}' (FORMAT parquet)")
        else:
            duckdb_file(path, f"CREATE TABLE t AS SELECT {select}")
    return path


@pytest.mark.parametrize("kind", ["csv", "json", "xlsx", "sqlite", "parquet", "duckdb"])
def test_a_table_over_the_column_limit_is_refused(tmp_path, build, kind):
    """20,000 columns (237 KB of CSV) took 40 s of CPU and a 3 MB profile."""
    path = _wide(tmp_path, kind, 11)
    with pytest.raises(TooManyColumns, match=rf"wide\.{kind}\b.* has 11 columns; the limit is "
                                             r"10 columns per table"):
        build(path, limits=ImportLimits(max_columns=10))
    assert build(path, version=2, limits=ImportLimits(max_columns=11)).tables


def test_the_default_column_limit_refuses_twenty_thousand_columns(tmp_path, data_dir):
    """Counted on the first line: DuckDB's sniffer alone takes gigabytes for these."""
    answer = in_child([_wide(tmp_path, "csv", 20_000)], data_dir)
    assert answer.get("error") == "TooManyColumns", answer
    assert answer["detail"] == ("wide.csv has 20,000 columns; the limit is 2,000 columns per "
                                "table (SUNRISE_IMPORT_MAX_COLUMNS).")


def test_limits_come_from_the_settings():
    from shared.config import Settings

    settings = Settings(import_max_rows=5, import_max_bytes=6, import_max_columns=7,
                        import_max_sheet_cells=8, import_source_memory_limit="9MB")
    assert ImportLimits.from_settings(settings) == ImportLimits(6, 5, 7, 8, "9MB")
    assert ImportLimits.from_settings(Settings()) == ImportLimits()


def test_file_source_names_travel_in_every_limit_error(tmp_path, build):
    path = _wide(tmp_path, "csv", 3)
    with pytest.raises(TooManyColumns) as caught:
        build(FileSource(path, "Quarterly report.csv"), limits=ImportLimits(max_columns=2))
    assert caught.value.extra == {"source": "Quarterly report.csv", "limit": 2}
