"""Gold files: the questions of an evaluation and the results a correct answer relies on.

A gold file is YAML: an optional ``title`` and a list ``questions`` of items::

    - id: avg-dep-delay            # stable, unique; --compare matches runs on it
      tier: easy                   # free text; the report breaks accuracy down by it
      question: What is the average departure delay?
      sql: SELECT avg(dep_delay) FROM flights       # the gold query, or:
      values: [12.64]              # expected values: a list of rows, or of scalars
      tolerance: 0.001             # optional: relative tolerance for numbers
      ordered: false               # optional: default, whether the gold SQL orders
      notes: ...                   # optional, shown in the report

Exactly one of ``sql`` and ``values`` is given. ``values`` as a list of scalars is a
one-column result (one row per scalar); as a list of lists, the rows.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from shared.errors import ValidationFailed

Scalar = str | int | float | bool | None


class GoldItem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=200)
    question: str = Field(min_length=1, max_length=8000)
    tier: str = "unspecified"
    sql: str | None = None
    values: list[Scalar | list[Scalar]] | None = None
    tolerance: float = Field(default=0.0, ge=0, le=1)
    ordered: bool | None = None
    notes: str = ""

    @model_validator(mode="after")
    def _one_source(self) -> GoldItem:
        if (self.sql is None) == (self.values is None):
            raise ValueError("give exactly one of `sql` (the gold query) and `values`")
        if self.sql is not None and not self.sql.strip():
            raise ValueError("`sql` is empty")
        return self

    def value_rows(self) -> list[tuple]:
        """``values`` as result rows (see the module doc)."""
        rows = self.values or []
        if all(isinstance(v, list) for v in rows):
            return [tuple(v) for v in rows]
        if any(isinstance(v, list) for v in rows):
            raise ValueError("`values` mixes rows (lists) and scalars")
        return [(v,) for v in rows]


class GoldSet(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: str = ""
    questions: list[GoldItem] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_ids(self) -> GoldSet:
        seen: set[str] = set()
        for item in self.questions:
            if item.id in seen:
                raise ValueError(f"question id {item.id!r} appears twice")
            seen.add(item.id)
        for item in self.questions:
            item.value_rows()  # mixed values fail here, with the id below
        return self


def load_gold(path: Path) -> GoldSet:
    """Read and validate a gold file; raises ValidationFailed naming the problem."""
    try:
        data: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ValidationFailed(f"{path}: not a readable YAML file ({exc})") from exc
    if isinstance(data, list):
        data = {"questions": data}
    try:
        return GoldSet.model_validate(data)
    except (ValidationError, ValueError) as exc:
        raise ValidationFailed(f"{path}: {_describe(exc, data)}") from exc


def _describe(exc: Exception, data: Any) -> str:
    if not isinstance(exc, ValidationError):
        return str(exc)
    problems = []
    for error in exc.errors()[:5]:
        where = list(error["loc"])
        if len(where) >= 2 and where[0] == "questions" and isinstance(where[1], int):
            try:
                item_id = data["questions"][where[1]].get("id", "?")
            except (KeyError, IndexError, TypeError, AttributeError):
                item_id = "?"
            where[1] = f"{where[1]} (id {item_id})"
        problems.append(f"{'.'.join(map(str, where)) or 'file'}: {error['msg']}")
    return "; ".join(problems)
