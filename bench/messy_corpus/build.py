"""Write the messy-file corpus of issue 33 into a folder, with what each value really is.

    python -m bench.messy_corpus OUTPUT_DIR

Every file is written by the tool people make such files with (pandas, openpyxl,
Python's ``csv`` in the encodings Excel and Windows use, ``json``, ``sqlite3``), from
data drawn with a seeded generator per file: the same content every run (workbooks
differ only in the save time openpyxl stamps), and adding a case changes no other. The cases live in ``text_files``, ``workbooks``,
``structured`` and ``clean``; ``manifest.yaml`` beside this module says, written
separately from the code, what type a person expects each column to have.

``build(folder)`` returns the truth of every file: per table and column the count of
values that are there (not missing) and, for numbers their sum, for dates and times
their first and last, so that a measurement can tell a column read as numbers from
one read as the right numbers.
"""
from __future__ import annotations

import datetime as dt
import decimal
import random
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path

# The markers people write for "no value", as issue 33 lists them, in a few cases.
MISSING_MARKERS = ("N/A", "n/a", "NA", "null", "NULL", "None", "-", "–", "?", "#N/A", "NaN",
                   "", "na", "Null", "NONE", "nan")

CaseFunction = Callable[["Case"], None]
_CASES: dict[str, CaseFunction] = {}


def case(file_name: str) -> Callable[[CaseFunction], CaseFunction]:
    """Register a function writing ``file_name`` (its module is one of the case modules)."""
    def register(function: CaseFunction) -> CaseFunction:
        if file_name in _CASES:
            raise ValueError(f"two cases write {file_name}")
        _CASES[file_name] = function
        return function
    return register


class Case:
    """One file being written: its path, its own seeded generator, and its truth."""

    def __init__(self, folder: Path, file_name: str) -> None:
        self.path = folder / file_name
        self.path.unlink(missing_ok=True)  # a database file would otherwise be added to
        self.rng = random.Random(zlib.crc32(file_name.encode()))
        self.truth: dict[str, dict[str, dict]] = {}

    def record(self, table: str, column: str, values: Iterable) -> None:
        """What ``column`` of ``table`` really holds (None for a missing value)."""
        present = [v for v in values if v is not None]
        truth: dict = {"count": len(present)}
        if present and all(isinstance(v, (int, float, decimal.Decimal)) and
                           not isinstance(v, bool) for v in present):
            truth["sum"] = float(sum(present))
        elif present and all(isinstance(v, dt.date) for v in present):
            truth["min"], truth["max"] = min(present).isoformat(), max(present).isoformat()
        self.truth.setdefault(table, {})[column] = truth

    # -- drawing values ---------------------------------------------------------------

    def money(self, low: float, high: float) -> float:
        return round(self.rng.uniform(low, high), 2)

    def day(self, start: dt.date = dt.date(2023, 1, 1), days: int = 730) -> dt.date:
        return start + dt.timedelta(days=self.rng.randrange(days))

    def moment(self) -> dt.datetime:
        return dt.datetime.combine(self.day(), dt.time()) + dt.timedelta(
            minutes=self.rng.randrange(24 * 60))

    def sometimes_missing(self, values: list, share: float = 0.15) -> list:
        return [None if self.rng.random() < share else v for v in values]

    def marker(self, index: int) -> str:
        return MISSING_MARKERS[index % len(MISSING_MARKERS)]

    def pick(self, choices: tuple) -> object:
        return self.rng.choice(choices)


# -- how people write numbers and dates -------------------------------------------------

def us(value: float, decimals: int = 2) -> str:
    """2,579.50"""
    return f"{value:,.{decimals}f}"


def german(value: float, decimals: int = 2) -> str:
    """8.102,58"""
    return us(value, decimals).translate(str.maketrans(",.", ".,"))


def french(value: float, decimals: int = 2, space: str = " ") -> str:
    """1 234 567,89 (a plain, no-break or narrow no-break space between groups)"""
    return us(value, decimals).replace(",", space).replace(".", ",")


def swiss(value: float, decimals: int = 2) -> str:
    """1'234.50"""
    return us(value, decimals).replace(",", "'")


def accounting(value: float) -> str:
    """(1,234.00) for a negative amount, 1,234.00 otherwise"""
    return f"({us(-value)})" if value < 0 else us(value)


def build(folder: Path, only: Iterable[str] | None = None) -> dict[str, dict]:
    """Write every case (or those named in ``only``) into ``folder`` (made if missing);
    the truth per file name."""
    from bench.messy_corpus import clean, structured, text_files, workbooks  # noqa: F401

    folder.mkdir(parents=True, exist_ok=True)
    truth = {}
    wanted = set(_CASES) if only is None else set(only)
    for file_name, function in sorted(_CASES.items()):
        if file_name not in wanted:
            continue
        written = Case(folder, file_name)
        function(written)
        truth[file_name] = written.truth
    return truth
