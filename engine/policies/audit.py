"""What the audit records of a job's policies: one short line per rule applied."""
from __future__ import annotations

from typing import Any

from sqlalchemy import select

from engine.policies.applied import applied_for
from shared.models import Dataset
from shared.principal import principal_for_job


def policies_for_job(session: Any, job: Any) -> list[str]:
    """The row policies and masks that bind ``job``'s principal on its dataset, each as
    one line (``sales: rows where region = 'EU'``, ``sales.customer: redact``) with the
    user's attribute values bound; [] when none does (or the job names no dataset).
    ``job`` needs ``dataset_id`` and what ``principal_for_job`` reads. Reads the dataset's
    current rules: call it when the job runs, as the worker's data source does."""
    if getattr(job, "dataset_id", None) is None:
        return []
    row = session.execute(select(Dataset.policies, Dataset.masks)
                          .where(Dataset.id == job.dataset_id)).first()
    if row is None or not (row.policies or row.masks):
        return []
    return applied_for(row.policies, row.masks, principal_for_job(session, job)).describe()
