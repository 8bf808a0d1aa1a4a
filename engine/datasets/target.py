"""The DuckDB database being built, as importers see it.

An importer asks the target for a table name (safe and unique in the dataset),
creates and fills that table on ``target.con``, reports rows as it goes and calls
``finish_table``, which gives the columns safe names too and reports the table done.

Progress goes to the caller's callback. An exception raised by the callback aborts
the import (the builder then leaves nothing behind); raised while DuckDB reads a
whole file in one statement, it interrupts that statement.
"""
from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import duckdb

from engine.datasets.limits import ImportBudget, ImportLimits
from engine.datasets.naming import NameBook, quote_ident
from engine.datasets.profile import ImportNotes

logger = logging.getLogger(__name__)

# How often a single long statement (a whole CSV read) is asked how far it got.
PROGRESS_POLL_S = 0.5


@dataclass(frozen=True)
class ImportProgress:
    """One progress report: ``rows`` copied so far into ``table`` (None while DuckDB reads
    a whole file in one statement, which reports ``percent`` instead), ``done`` once the
    table is complete, and ``total_rows`` over every table finished before this one plus
    this one's rows."""

    table: str
    rows: int | None
    done: bool = False
    percent: float | None = None
    total_rows: int = 0


ProgressCallback = Callable[[ImportProgress], None]


class ImportTarget:
    """Naming, progress and bookkeeping around the connection importers write to.

    ``limits`` are the import's caps and ``budget`` what it has read so far (see
    ``limits``); ``scratch`` is a folder of the build's own for files an importer
    makes on the way (a decompressed copy), removed with the build. ``layouts`` are a
    person's corrections of a table's layout, keyed by the table's final name (see
    ``layout_for``).
    """

    def __init__(self, con: duckdb.DuckDBPyConnection,
                 on_progress: ProgressCallback | None = None, *,
                 limits: ImportLimits | None = None, scratch: Path | None = None,
                 layouts: Mapping[str, Mapping] | None = None) -> None:
        self.con = con
        self._layouts = {name: dict(layout) for name, layout in (layouts or {}).items()}
        self.limits = limits or ImportLimits()
        self.budget = ImportBudget(self.limits)
        self._scratch = scratch
        self._on_progress = on_progress
        self._names = NameBook()
        self._lock = threading.Lock()
        self.tables: list[str] = []
        self.notes: dict[str, ImportNotes] = {}
        self._finished_rows = 0

    def scratch_file(self, name: str) -> Path:
        """A path for a temporary file of this build (its folder is made on first use)."""
        if self._scratch is None:
            raise RuntimeError("this import target has no scratch folder")
        self._scratch.mkdir(exist_ok=True)
        return self._scratch / name

    def table_name(self, wanted: str) -> str:
        """A safe identifier for a new table, unique in this dataset."""
        return self._names.claim(wanted, "data")

    def layout_for(self, table: str) -> dict:
        """The layout a person set for ``table`` (its name from ``table_name``):
        ``{"header_row": int | None, "skip_footer": int | None}``. ``header_row`` is the
        1-based row of the file or sheet that holds the header, ``skip_footer`` how many
        rows at the end are left out; None where the importer infers it itself.
        Raises ``ValueError`` for a value that is not a count (the API checks first)."""
        given = self._layouts.get(table, {})
        header_row, skip_footer = given.get("header_row"), given.get("skip_footer")
        for key, value, least in (("header_row", header_row, 1), ("skip_footer", skip_footer, 0)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or value < least):
                raise ValueError(f"{table}: {key} must be a whole number of at least {least}, "
                                 f"not {value!r}")
        return {"header_row": header_row, "skip_footer": skip_footer}

    def note_column(self, table: str, column: str, *, original: str | None = None,
                    format: str | None = None, note: str | None = None,
                    suggestion: dict | None = None) -> None:
        """Record how ``column`` was read: its values' ``original`` form ("text like
        `$1,017.87`"), the ``format`` they were read with and a ``note`` describing it;
        for a column left text, the re-type ``suggestion`` (``{"type", "format",
        "label"}``). Names as they are now; ``finish_table`` follows its renames."""
        given = {k: v for k, v in (("original", original), ("format", format),
                                   ("note", note), ("suggestion", suggestion))
                 if v is not None}
        self._notes(table).columns.setdefault(column, {}).update(given)

    def note_table(self, table: str, note: str) -> None:
        """Describe what the import did to ``table`` as a whole (rows it left out...)."""
        notes = self._notes(table)
        notes.note = f"{notes.note} {note}" if notes.note else note

    def warn(self, table: str, message: str) -> None:
        """A warning a person should read about ``table`` (what stayed text, and why)."""
        self._notes(table).warnings.append(message)
        logger.info("import warning for %s: %s", table, message)

    def _notes(self, table: str) -> ImportNotes:
        return self.notes.setdefault(table, ImportNotes())

    def report(self, table: str, rows: int | None, *, percent: float | None = None) -> None:
        """Tell the caller how far ``table`` has got. May run on a helper thread."""
        total = self._finished_rows + (rows or 0)
        self._emit(ImportProgress(table, rows, False, percent, total))

    @contextlib.contextmanager
    def watch(self, table: str) -> Iterator[None]:
        """Report DuckDB's own progress of the statement run inside this block."""
        stop = threading.Event()
        raised: list[BaseException] = []

        def poll() -> None:
            last = None
            while not stop.wait(PROGRESS_POLL_S):
                try:
                    percent = self.con.query_progress()
                except Exception:
                    logger.debug("no progress for %s", table, exc_info=True)
                    continue
                if percent >= 0 and percent != last:
                    last = percent
                    try:
                        self.report(table, None, percent=round(min(percent, 100.0), 1))
                    except Exception as exc:  # handed to the importing thread below
                        raised.append(exc)
                        self.con.interrupt()
                        return

        thread = threading.Thread(target=poll, name=f"import-progress-{table}", daemon=True)
        thread.start()
        try:
            yield
        except duckdb.InterruptException:
            if raised:  # appended before the interrupt, so already here
                raise raised[0] from None
            raise
        finally:
            stop.set()
            thread.join()
        if raised:
            raise raised[0]

    def finish_table(self, table: str, source: str | None = None) -> int:
        """Give ``table``'s columns safe, unique names, count its rows and report it done.

        Returns the row count. Raises ``TooManyColumns``/``TooManyRows`` (naming
        ``source``, else the table) past the import's limits: the last word for
        importers whose source cannot tell in advance.
        """
        columns = [name for (name,) in self.con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE database_name = current_database() "
            "AND schema_name = 'main' AND table_name = ? ORDER BY column_index",
            [table]).fetchall()]
        self.limits.check_columns(len(columns), source or table)
        book = NameBook()
        renames = [(name, safe) for name in columns if (safe := book.claim(name, "col")) != name]
        # In two steps, so that no new name meets an old one not renamed yet ("A B", "a_b").
        for index, (name, _) in enumerate(renames):
            self._rename_column(table, name, f"sunrise_renaming_{index}")
        for index, (_, safe) in enumerate(renames):
            self._rename_column(table, f"sunrise_renaming_{index}", safe)
        notes = self.notes.get(table)
        if notes is not None:
            for index, (name, _) in enumerate(renames):
                notes.rename_column(name, f"sunrise_renaming_{index}")
            for index, (_, safe) in enumerate(renames):
                notes.rename_column(f"sunrise_renaming_{index}", safe)
        (rows,) = self.con.execute(f"SELECT count(*) FROM {quote_ident(table)}").fetchone()
        self.budget.add_rows(rows, source or table)
        self.tables.append(table)
        self._finished_rows += rows
        self._emit(ImportProgress(table, rows, True, 100.0, self._finished_rows))
        logger.info("imported table %s: %s rows", table, rows)
        return rows

    def _rename_column(self, table: str, old: str, new: str) -> None:
        self.con.execute(f"ALTER TABLE {quote_ident(table)} RENAME COLUMN {quote_ident(old)} "
                         f"TO {quote_ident(new)}")

    def drop_table(self, table: str) -> None:
        """Drop a half-filled table (before a retry); its name stays claimed."""
        self.con.execute(f"DROP TABLE IF EXISTS {quote_ident(table)}")

    def _emit(self, progress: ImportProgress) -> None:
        if self._on_progress is None:
            return
        with self._lock:  # one report at a time, in order, even from the watch thread
            self._on_progress(progress)
