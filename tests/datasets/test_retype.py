"""A person's re-types applied by the import (issue 33 §2): after the import's own reading,
each re-typed column becomes the type asked, read in the format given; a value that does
not convert fails the import naming its row and value, and nothing is kept."""
from __future__ import annotations

import csv
import datetime as dt
import decimal

import pandas as pd
import pytest

from shared.errors import ImportFailed
from tests.datasets.conftest import column_types, files_under, query


@pytest.fixture
def german_csv(tmp_path):
    """Written as a German spreadsheet export is: pandas with ';' and decimal commas,
    dates as day.month.year, order days as yyyymmdd numbers."""
    frame = pd.DataFrame({
        "kunde": ["Müller", "Schmidt", "Weber", "Fischer"],
        "umsatz": [8102.58, 12.5, 1056.13, None],
        "bestellt": [20240131, 20240215, 20240301, 20240302],
        "geliefert": ["31.01.2024", "15.02.2024", "n/a", "02.03.2024"],
    })
    path = tmp_path / "umsatz.csv"
    frame.to_csv(path, sep=";", decimal=",", index=False)
    return path


RETYPES = {"umsatz": {"umsatz": {"type": "DECIMAL(12,2)", "format": "decimal_comma"},
                      "bestellt": {"type": "DATE", "format": "%Y%m%d"},
                      "geliefert": {"type": "DATE", "format": "%d.%m.%Y"}}}


def test_retyped_columns_take_the_type_asked_read_in_their_format(build, german_csv):
    built = build(german_csv, retypes=RETYPES)
    types = column_types(built.path, "umsatz")
    assert types == {"kunde": "VARCHAR", "umsatz": "DECIMAL(12,2)", "bestellt": "DATE",
                     "geliefert": "DATE"}
    assert query(built.path, "SELECT umsatz, bestellt, geliefert FROM umsatz ORDER BY kunde") == [
        (None, dt.date(2024, 3, 2), dt.date(2024, 3, 2)),
        (decimal.Decimal("8102.58"), dt.date(2024, 1, 31), dt.date(2024, 1, 31)),
        (decimal.Decimal("12.50"), dt.date(2024, 2, 15), dt.date(2024, 2, 15)),
        (decimal.Decimal("1056.13"), dt.date(2024, 3, 1), None)]
    (table,) = built.tables
    columns = {c.name: c for c in table.columns}
    assert columns["geliefert"].format == "%d.%m.%Y"
    assert columns["geliefert"].original == "text like `31.01.2024`"
    assert columns["umsatz"].max == 8102.58


def test_a_value_that_does_not_convert_fails_the_import_naming_row_and_value(
        build, german_csv, data_dir):
    frame = pd.read_csv(german_csv, sep=";", decimal=",", dtype=str)
    frame.loc[2, "geliefert"] = "bald"
    frame.to_csv(german_csv, sep=";", index=False)
    with pytest.raises(ImportFailed) as failed:
        build(german_csv, retypes=RETYPES)
    detail = failed.value.detail
    assert "umsatz.geliefert: row 3 has 'bald'" in detail and "DATE" in detail, detail
    assert failed.value.extra["failures"] == [{
        "table": "umsatz", "column": "geliefert", "type": "DATE", "format": "%d.%m.%Y",
        "row": 3, "value": "bald", "count": 1}]
    assert files_under(data_dir / "ds") == []


def test_a_retype_of_a_column_the_source_no_longer_has_is_a_warning(build, german_csv):
    built = build(german_csv, retypes={"umsatz": {"rabatt": {"type": "DOUBLE"}},
                                       "gone": {"x": {"type": "BIGINT"}}})
    (table,) = built.tables
    assert [w for w in table.warnings if "rabatt" in w] == [
        "Column rabatt was re-typed to DOUBLE, but this import has no such column; the "
        "re-type was not applied."]


def test_a_column_the_import_left_text_converts_with_the_format_a_person_names(
        build, tmp_path):
    """Written by Python's csv: dates that read day first as well as month first, and
    amounts like 1,234 (a thousand, or one point two?): the import keeps both as text
    with a warning; the person's re-type says which is meant."""
    path = tmp_path / "due.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([["id", "due", "amount"], [1, "01/02/2024", "1,234"],
                                      [2, "03/04/2024", "2,500"], [3, "05/06/2024", "N/A"]])
    assert column_types(build(path).path, "due") == {
        "id": "BIGINT", "due": "VARCHAR", "amount": "VARCHAR"}
    built = build(path, version=2, retypes={"due": {
        "due": {"type": "DATE", "format": "%d/%m/%Y"},
        "amount": {"type": "BIGINT", "format": "decimal_point"}}})
    assert column_types(built.path, "due") == {"id": "BIGINT", "due": "DATE", "amount": "BIGINT"}
    assert query(built.path, "SELECT due, amount FROM due ORDER BY id") == [
        (dt.date(2024, 2, 1), 1234), (dt.date(2024, 4, 3), 2500), (dt.date(2024, 6, 5), None)]
    columns = {c.name: c for c in built.tables[0].columns}
    assert (columns["due"].original, columns["due"].format) == ("text like `01/02/2024`",
                                                                "%d/%m/%Y")
