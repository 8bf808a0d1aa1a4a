"""A dataset's verified queries: kept only after their SQL ran in the sandbox, with the
question's embedding so workers retrieve them by meaning."""
from __future__ import annotations

from sqlalchemy import delete, select

from api.resources import Resources
from api.services.datasets import _owned
from shared.dataset_annotations import Example
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

    Raises Forbidden (not an admin), NotFound, Conflict (no ready version; a live
    dataset), ValidationFailed (422) with the engine's error when the SQL fails.
    """
    _admin(principal)
    with res.session() as s:
        row = _owned(s, principal.tenant_id, dataset_id)
        if row.version is None:
            raise Conflict(f"Dataset {dataset_id} has no ready version to check the SQL on yet.")
        if row.mode == "live":
            raise Conflict("Verified queries are checked on a snapshot; a live dataset's are "
                           "not supported yet.")
        version = row.version
    _check_sql(res, dataset_id, version, question, sql)
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


def _check_sql(res: Resources, dataset_id: str, version: int, question: str, sql: str) -> None:
    from api.example_check import check_examples

    try:
        check_examples(res.settings, res.settings.data_dir, dataset_id, version,
                       [Example(question=question[:500], sql=sql)])
    except ValidationFailed as exc:
        failures = exc.extra.get("examples") or [{}]
        error = failures[0].get("error") or str(exc)
        raise ValidationFailed(f"The SQL failed on version {version}: {error}",
                               error=error) from None
