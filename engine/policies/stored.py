"""The row policies and masks stored on a dataset that bind one principal, for readers of
a dataset version (snapshot or live) outside a job.

``stored_policies`` is what ``engine/dataset_query.py`` -- the API's ``run_sql``, a
verified query's check and a schedule's condition -- uses, so that they see exactly what
the principal's jobs see (``worker/jobs/data_source.py`` applies the same ``applied_for``
and ``PolicedQueries``): None when no rule binds the principal, else a ``StoredPolicies``
whose ``police(handle)`` rewrites every statement run through it (``rewrite.py``). It is
read in the caller's session; the handle is wrapped after, so no lock is held while the
statement runs.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from engine.policies.applied import AppliedPolicies, PolicedQueries, applied_for
from shared.models import Dataset, DatasetVersion


@dataclass(frozen=True)
class StoredPolicies:
    applied: AppliedPolicies
    schema: Sequence[tuple[str, Sequence[tuple[str, str]]]]
    dialect: str = "duckdb"

    def police(self, handle: Any) -> PolicedQueries:
        """``handle`` with every statement rewritten; raises ``FilterRefused`` when a
        stored filter cannot be bound (an admin must correct it)."""
        return PolicedQueries(handle, self.applied, dialect=self.dialect, schema=self.schema)


def stored_policies(session: Any, dataset_id: str | None, version: int | None,
                    principal: Any) -> StoredPolicies | None:
    """The rules of ``dataset_id`` binding ``principal``, with ``version``'s tables; None
    when none does (None ``dataset_id`` is the deployment's built-in dataset: no rules)."""
    if dataset_id is None:
        return None
    rules = session.execute(select(Dataset.policies, Dataset.masks)
                            .where(Dataset.id == dataset_id)).first()
    if rules is None or not (rules.policies or rules.masks):
        return None
    applied = applied_for(rules.policies, rules.masks, principal)
    if applied.empty:
        return None
    current = session.get(DatasetVersion, (dataset_id, version))
    schema = [(t["name"], [(c["name"], c["type"]) for c in t.get("columns", ())])
              for t in (current.tables if current is not None else ())]
    dialect = (current.engine or {}).get("dialect") if current is not None else None
    return StoredPolicies(applied, schema, dialect or "duckdb")
