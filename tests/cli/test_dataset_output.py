"""What ``sunrise datasets describe`` prints for a dataset's profile."""
from __future__ import annotations

import io

import pytest
from rich.console import Console

from sunrise.cli.dataset_output import is_label, print_dataset


def _column(name: str, low, high, distinct: int = 1234) -> dict:
    return {"name": name, "type": "BIGINT", "null_fraction": 0.0, "distinct": distinct,
            "min": low, "max": high, "top_values": [{"value": high, "count": 23456}]}


def _describe(*columns: dict) -> str:
    out = io.StringIO()
    print_dataset({"dataset_id": "ds-1", "name": "flights", "status": "ready", "version": 1,
                   "tables": [{"name": "flights", "rows": 336776, "columns": list(columns)}]},
                  Console(file=out, width=400, color_system=None))
    return out.getvalue()


def _row(text: str, column: str) -> str:
    return next(line for line in text.splitlines() if f" {column} " in line)


def test_years_ids_codes_and_zips_print_as_written_while_counts_keep_separators():
    text = _describe(_column("year", 2013, 2024), _column("customer_id", 1, 987654),
                     _column("ZipCode", 1001, 99950), _column("tailSerial", 10000, 55555),
                     _column("amount", 1500, 2500000))
    assert "336,776 rows" in text
    year = _row(text, "year")
    assert "2013" in year and "2024" in year and "2,013" not in year and "2,024" not in year
    assert "987654" in _row(text, "customer_id") and "987,654" not in text
    assert "99950" in _row(text, "ZipCode") and "1001" in _row(text, "ZipCode")
    assert "55555" in _row(text, "tailSerial")
    amount = _row(text, "amount")
    assert "1,500" in amount and "2,500,000" in amount
    # distinct is a count, whatever the column: separators everywhere.
    assert all("1,234" in _row(text, c) for c in ("year", "customer_id", "ZipCode", "amount"))
    # so are the counts of the most frequent values.
    assert "2024 (23,456)" in year


@pytest.mark.parametrize(("column", "value", "label"), [
    ("year", 2013, True), ("model_year", 1999, True), ("fiscalYear", 2024, True),
    ("year", 20130, False), ("year", 999, False), ("birth_yr", 1980, True),
    ("id", 123456, True), ("CustomerID", 123456, True), ("order-key", 5000, True),
    ("zip", 10001, True), ("serial", 4000, True), ("product_code", 1234, True),
    ("amount", 2013, False), ("flights", 58665, False), ("yearly_total", 2013, False),
    ("paid", 5000, False), ("valid", 5000, False),
])
def test_a_label_is_told_by_the_columns_words_and_a_year_by_its_range(column, value, label):
    assert is_label(column, value) is label
