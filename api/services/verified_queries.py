"""A dataset's verified queries: kept only after their SQL ran on the dataset's current
version, with the question's embedding so workers retrieve them by meaning.

The check is the caller's ``run_sql`` (``engine.dataset_query``): a snapshot's SQL in the
sandbox, a live dataset's on its source with the model's safety (statement check,
read-only session, timeout, slots, outbound policy), both under the admin's own row
policies and masks. SQL that fails is a 422 naming the engine's error; a live source
that cannot be reached is a 503 and nothing is kept.
"""
from __future__ import annotations

from sqlalchemy import delete, select

from api.resources import Resources
from api.services.datasets import _owned
from engine.dataset_query import DatasetTarget, dataset_target, run_on_dataset
from shared.errors import Conflict, Forbidden, NotFound, ValidationFailed
from shared.models import VerifiedQuery, is_id, iso
from shared.principal import Principal


def _admin(principal: Principal) -> None:
    if not principal.is_admin:
        raise Forbidden("Only admins manage verified queries.")


def created_by(principal: Principal) -> str:
    if principal.external_id:
        return principal.external_id
    return f"user:{principal.user_id}" if principal.user_id is not None else "tenant"


def add_verified_query(res: Resources, principal: Principal, dataset_id: str, question: str,
                       sql: str, from_job_id: str | None) -> dict:
    """Check ``sql`` by running it on the dataset's current version, then keep it.

    Raises Forbidden (not an admin), NotFound, Conflict (no ready version),
    ValidationFailed (422) with the engine's error when the SQL fails, ServiceUnavailable
    (503) when the data cannot be opened (a live source unreachable).
    """
    _admin(principal)
    with res.session() as s:
        row = _owned(s, principal.tenant_id, dataset_id)
        if row.version is None:
            raise Conflict(f"Dataset {dataset_id} has no ready version to check the SQL on yet.")
        target = dataset_target(s, dataset_id, row.version, principal)
    _check_sql(res, target, sql)
    from engine.embeddings import embed_one, load_embedder, vector_bytes

    vector = vector_bytes(embed_one(load_embedder(), question))
    with res.session() as s:
        _owned(s, principal.tenant_id, dataset_id)  # not deleted meanwhile
        row = VerifiedQuery(tenant_id=principal.tenant_id, dataset_id=dataset_id,
                            question=question.strip(), sql=sql.strip(), embedding=vector,
                            from_job_id=from_job_id, created_by=created_by(principal))
        s.add(row)
        s.flush()
        return view(row)


def list_verified_queries(res: Resources, principal: Principal, dataset_id: str) -> dict:
    """The dataset's verified queries, oldest first (anyone of the tenant may read them:
    the model reads them too)."""
    with res.session() as s:
        _owned(s, principal.tenant_id, dataset_id)
        rows = s.scalars(select(VerifiedQuery).where(
            VerifiedQuery.tenant_id == principal.tenant_id,
            VerifiedQuery.dataset_id == dataset_id).order_by(VerifiedQuery.created_at)).all()
        return {"items": [view(r) for r in rows]}


def delete_verified_query(res: Resources, principal: Principal, dataset_id: str,
                          vq_id: str) -> None:
    """Raises Forbidden, or NotFound for an unknown dataset or query."""
    _admin(principal)
    with res.session() as s:
        _owned(s, principal.tenant_id, dataset_id)
        gone = s.execute(delete(VerifiedQuery).where(
            VerifiedQuery.id == vq_id, VerifiedQuery.dataset_id == dataset_id,
            VerifiedQuery.tenant_id == principal.tenant_id)).rowcount if is_id(vq_id) else 0
        if not gone:
            raise NotFound(f"No verified query {vq_id} on dataset {dataset_id}.")


def view(row: VerifiedQuery) -> dict:
    return {"verified_query_id": row.id, "question": row.question, "sql": row.sql,
            "from_job_id": row.from_job_id, "created_by": row.created_by,
            "created_at": iso(row.created_at)}


def _check_sql(res: Resources, target: DatasetTarget, sql: str) -> None:
    result = run_on_dataset(res.settings, target, sql,
                            label=f"dataset {target.dataset_id} verified query")
    if result.is_error:
        raise ValidationFailed(f"The SQL failed on version {target.version}: {result.error}",
                               error=result.error)
