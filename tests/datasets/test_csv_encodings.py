"""Text files in the encodings people's tools write: Python's csv with cp1252, Latin-1 and
UTF-16 (Excel's "Unicode text"), pandas with a BOM, imported by the real engine; and a
file that is not what its start says fails naming the encoding and the fix."""
from __future__ import annotations

import codecs
import csv
import gzip

import pandas as pd
import pytest

from engine.datasets.importers.text_encoding import SAMPLE_BYTES
from shared.errors import MalformedSource
from tests.datasets.conftest import column_types, query

ROWS = [["kunde", "betrag", "notiz"],
        ["Müller GmbH", "€ 12", "“Eilig” – bitte’s"],
        ["Zoë Ñúñez", "7", "Größe 40…"]]


def _write_csv(path, encoding, rows=ROWS, delimiter=","):
    with open(path, "w", encoding=encoding, newline="") as handle:
        csv.writer(handle, delimiter=delimiter).writerows(rows)
    return path


@pytest.mark.parametrize("encoding", ["cp1252", "utf-8-sig", "utf-8"])
def test_windows_and_utf8_files_read_as_written(tmp_path, build, encoding):
    built = build(_write_csv(tmp_path / "kunden.csv", encoding))
    assert list(column_types(built.path, "kunden")) == ["kunde", "betrag", "notiz"]
    assert query(built.path, "SELECT kunde, betrag, notiz FROM kunden ORDER BY kunde") == [
        tuple(row) for row in ROWS[1:]]


def test_latin1_from_pandas_with_decimal_commas(tmp_path, build):
    path = tmp_path / "ventas.csv"
    pd.DataFrame({"cliente": ["Peña", "Núñez", "Ibáñez"], "importe": [1.5, 2.25, 3.0]}).to_csv(
        path, sep=";", decimal=",", index=False, encoding="latin-1")
    built = build(path)
    assert query(built.path, "SELECT string_agg(cliente, ',' ORDER BY cliente) FROM ventas") == [
        ("Ibáñez,Núñez,Peña",)]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be"])
def test_excel_unicode_text_is_utf16_with_tabs(tmp_path, build, encoding):
    path = tmp_path / "unicode.txt"
    rows = [*ROWS, ["東京", "3", "ok"]]
    if encoding == "utf-16-be":  # Python's utf-16 writes little-endian; Excel too. Both marked.
        text = "".join("\t".join(row) + "\r\n" for row in rows)
        path.write_bytes(codecs.BOM_UTF16_BE + text.encode("utf-16-be"))
    else:
        _write_csv(path, encoding, rows, delimiter="\t")
    built = build(path)
    assert column_types(built.path, "unicode") == {
        "kunde": "VARCHAR", "betrag": "VARCHAR", "notiz": "VARCHAR"}
    assert query(built.path, "SELECT kunde FROM unicode ORDER BY kunde") == [
        ("Müller GmbH",), ("Zoë Ñúñez",), ("東京",)]


def test_a_compressed_cp1252_file_is_decoded_after_decompressing(tmp_path, build):
    path = tmp_path / "kunden.csv.gz"
    path.write_bytes(gzip.compress(_write_csv(tmp_path / "plain.csv", "cp1252").read_bytes()))
    built = build(path)
    assert query(built.path, "SELECT notiz FROM kunden WHERE betrag = '€ 12'") == [
        ("“Eilig” – bitte’s",)]


def _big_ascii_rows(count_bytes):
    row = b"plain ascii row,1\n"
    return b"name,n\n" + row * (count_bytes // len(row) + 1)


def test_ascii_at_first_then_windows_text_is_read_as_windows_1252(tmp_path, build):
    path = tmp_path / "late.csv"
    path.write_bytes(_big_ascii_rows(SAMPLE_BYTES) + "Café € 5,2\n".encode("cp1252"))
    built = build(path)
    assert query(built.path, "SELECT name, n FROM late WHERE n = 2") == [("Café € 5", 2)]


def test_utf8_that_turns_into_another_encoding_names_the_line_and_the_fix(tmp_path, build):
    head = "name,n\n" + "Müller,1\n" * 10
    path = tmp_path / "mixed.csv"
    path.write_bytes(head.encode() + "Schäfer,2\n".encode("cp1252") + b"Ende,3\n")
    with pytest.raises(MalformedSource) as caught:
        build(path)
    detail = caught.value.detail
    assert detail.startswith("mixed.csv is not valid UTF-8 near line 12 (byte "), detail
    assert "Save it as CSV UTF-8" in detail and "Columns" not in detail
    assert caught.value.extra["line"] == 12


def test_damaged_utf16_names_the_encoding(tmp_path, build):
    path = tmp_path / "damaged.txt"
    good = "a\tb\r\n1\t2\r\n3\t4\r\n".encode("utf-16-le")
    path.write_bytes(codecs.BOM_UTF16_LE + good + b"\x00\xdc" + "5\t6\r\n".encode("utf-16-le"))
    with pytest.raises(MalformedSource, match=r"^damaged\.txt is not valid UTF-16 near line 4 "
                                              r".*Save it as CSV UTF-8"):
        build(path)
