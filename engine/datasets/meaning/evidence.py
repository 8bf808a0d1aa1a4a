"""What a source's unambiguous columns tell about its ambiguous ones.

A column of ``1,234`` alone could be a thousand or 1.234, and one of ``03/04/2024``
alone the 3rd of April or the 4th of March. The file's other columns decide: a column
that can only be read with the decimal comma (``8.102,58``) says the file writes
decimal commas, one that holds ``31/01/2024`` says it puts the day first. The table's
own columns count first, then the source's other tables (a workbook's sheets); where
they disagree, or say nothing, the column is not decided.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field


@dataclass
class Evidence:
    """Conventions seen, per table: ``decimal`` ("." or ",") and ``order`` ("day", "month")."""

    seen: dict[tuple[str, str], set[str]] = field(default_factory=lambda: defaultdict(set))

    def saw(self, table: str, kind: str, value: str) -> None:
        self.seen[(table, kind)].add(value)

    def decide(self, table: str, kind: str) -> str | None:
        """The one convention of ``kind`` the table's columns show, else the source's, else None."""
        own = self.seen.get((table, kind), set())
        if own:
            return next(iter(own)) if len(own) == 1 else None
        everywhere = set().union(*(v for (_, k), v in self.seen.items() if k == kind))
        return next(iter(everywhere)) if len(everywhere) == 1 else None
