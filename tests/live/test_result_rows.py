"""``take_rows``: the column-wise fast path keeps exactly what the row-by-row rule
(``bounded_row`` per row, the sandbox's cuts and sizes) keeps, for every kind of batch.
Pure: no database."""
from __future__ import annotations

import datetime as dt
import decimal
import random
import uuid

import pytest

from engine.live.result_rows import bounded_row, take_rows
from engine.sql.query_result import MAX_CELL_CHARS, MAX_COLUMNS


def _row_by_row(batches, cap: int, max_bytes: int):
    """The rule as first written: each row cut and sized, then kept or not."""
    kept, size = [], 0
    for batch in batches:
        for raw in batch:
            values, row_size = bounded_row(raw[:MAX_COLUMNS])
            size += row_size
            if len(kept) >= cap or (size > max_bytes and kept):
                return kept, size, True
            kept.append(values)
    return kept, size, False


def _through_take_rows(batches, cap: int, max_bytes: int):
    kept, size = [], 0
    for batch in batches:
        size, full = take_rows(batch, kept, size, cap=cap, max_bytes=max_bytes)
        if full:
            return kept, size, True
    return kept, size, False


_VALUES = [
    None, 0, -7, 2**70, 1.5, float("nan"), True, decimal.Decimal("12.30"),
    dt.date(2026, 1, 2), dt.datetime(2026, 1, 2, 3, 4), dt.time(5, 6), dt.timedelta(days=2),
    uuid.UUID(int=7), "", "north", "x" * MAX_CELL_CHARS, "y" * (MAX_CELL_CHARS + 1),
    "z" * (MAX_CELL_CHARS + 2), b"\x00\x01", bytearray(b"ab"), [1, 2], {"k": "v"},
]


def _batch(rng: random.Random, rows: int, width: int, kinds: list) -> list[tuple]:
    columns = [rng.sample(kinds, k=min(len(kinds), rng.randint(1, 3))) for _ in range(width)]
    return [tuple(rng.choice(column) for column in columns) for _ in range(rows)]


@pytest.mark.parametrize("seed", range(40))
def test_the_fast_path_keeps_what_row_by_row_keeps(seed):
    rng = random.Random(seed)
    plain = [v for v in _VALUES if not isinstance(v, (bytes, bytearray, list, dict))
             and not (isinstance(v, str) and len(v) > MAX_CELL_CHARS + 1)]
    kinds = plain if seed % 2 else _VALUES  # half the runs only plain cells
    width = rng.choice([1, 3, MAX_COLUMNS + 2])
    batches = [_batch(rng, rng.randint(0, 40), width, kinds) for _ in range(rng.randint(1, 5))]
    cap = rng.choice([5, 30, 1000])
    max_bytes = rng.choice([50, 2_000, 10**9])
    expected = _row_by_row(batches, cap, max_bytes)
    got = _through_take_rows(batches, cap, max_bytes)
    assert repr(got) == repr(expected)  # repr: NaN is not equal to itself


def test_a_subclass_of_a_small_type_takes_the_row_by_row_path():
    class Money(decimal.Decimal):
        pass

    batch = [(Money("1.5"), "a")]
    kept: list[tuple] = []
    size, full = take_rows(batch, kept, 0, cap=10, max_bytes=100)
    assert (kept, size, full) == ([bounded_row(batch[0])[0]], 25, False)
