"""Issue 33, "Measured": the messy-file corpus imported through the real engine.

The corpus (``bench/messy_corpus``) is written at test time by pandas, openpyxl,
Python's ``csv`` and ``sqlite3`` and ``json``; each file is imported with
``build_version`` and its columns compared with ``manifest.yaml``, what a person
expects. A failure prints every miss.
"""
from __future__ import annotations

import pandas as pd
import pytest

from bench.messy_corpus.build import build
from bench.messy_corpus.measure import (
    SHARE_TARGET,
    CorpusFigures,
    Expected,
    kind_of,
    load_manifest,
    measure_corpus,
)

pytestmark = pytest.mark.slow  # about 50 imports: tens of seconds on a shared machine


@pytest.fixture(scope="module")
def figures(tmp_path_factory) -> CorpusFigures:
    folder = tmp_path_factory.mktemp("messy_corpus")
    return measure_corpus(folder, build(folder), work=tmp_path_factory.mktemp("versions"))


def test_the_corpus_has_forty_files_written_by_peoples_tools(figures):
    manifest = load_manifest()
    assert figures.files == len(manifest) >= 40
    kinds = {name.rsplit(".", 1)[1] for name in manifest}
    assert kinds >= {"csv", "tsv", "txt", "xlsx", "json", "ndjson", "sqlite", "db"}


def test_columns_are_typed_as_a_person_expects(figures):
    share, summary = figures.share, figures.summary()
    assert share >= SHARE_TARGET, summary


def test_no_number_or_date_column_is_silently_left_as_text(figures):
    silent, summary = len(figures.silent), figures.summary()
    assert silent == 0, summary


def test_every_file_imports_with_the_rows_a_person_counts(figures):
    failed, wrong_rows, summary = figures.failed_files, figures.row_misses, figures.summary()
    assert not failed and not wrong_rows, summary


def test_a_column_read_as_the_wrong_numbers_is_a_miss(tmp_path):
    """The measure looks at values, not only types: a count column holding 1.234 where
    the source meant 1,234 is a number column, and still a miss (and not a silent one)."""
    pd.DataFrame({"part": ["p0", "p1", "p2"], "count": [1.234, 2.5, 9.001]}).to_parquet(
        tmp_path / "stock.parquet")
    manifest = {"stock.parquet": {"stock": {"rows": 3, "columns": {
        "part": Expected("text"), "count": Expected("number")}}}}
    truth = {"stock.parquet": {"stock": {"count": {"count": 3, "sum": 12735.0}}}}
    measured = measure_corpus(tmp_path, truth, manifest)
    assert (measured.as_expected, measured.columns) == (1, 2)
    (miss,) = measured.misses
    assert (miss.column, miss.got, miss.silent) == ("count", "DOUBLE", False)
    assert "sum to 12.7350" in miss.reason
    assert measured.share == 0.5 and measured.silent == []


def test_duckdb_types_map_to_what_a_person_calls_them():
    assert [kind_of(t) for t in ("BIGINT", "DECIMAL(12,2)", "DECIMAL(18,0)", "DOUBLE", "DATE",
                                 "TIMESTAMP WITH TIME ZONE", "VARCHAR", "BOOLEAN",
                                 "STRUCT(sku VARCHAR, qty BIGINT)[]")] == [
        "integer", "number", "integer", "number", "date", "timestamp", "text", "boolean",
        "list"]
