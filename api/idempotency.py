"""Idempotent submission: ``Idempotency-Key`` on ``POST /v1/jobs``, ``/v1/batches`` and
``/v1/datasets``.

Per tenant, the same key with the same body gives back what the first request made;
the same key with another body is a 409. The key is stored on the row it made, with
a hash of the body, under a unique index that settles two requests racing with one key.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any, TypeVar

from flask import request
from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.orm import Session

from shared.errors import BadRequest, Conflict

HEADER = "Idempotency-Key"
MAX_KEY_CHARS = 200
Row = TypeVar("Row")
View = TypeVar("View")


def idempotency_key() -> str | None:
    """The request's key, if it sent one; raises BadRequest for an empty or overlong one."""
    key = request.headers.get(HEADER)
    if key is not None and not (0 < len(key) <= MAX_KEY_CHARS):
        raise BadRequest(f"{HEADER} must be 1 to {MAX_KEY_CHARS} characters.")
    return key


def body_hash(body: BaseModel) -> str:
    """What identifies a request's body under its key."""
    return hashlib.sha256(json.dumps(body.model_dump(), sort_keys=True).encode()).hexdigest()


def earlier(s: Session, model: type[Row], tenant_id: int, key: str, digest: str) -> Row | None:
    """The row an earlier request with ``key`` made, if any; raises Conflict when that
    request had another body."""
    row = s.scalar(select(model).where(model.tenant_id == tenant_id,
                                       model.idempotency_key == key))
    if row is not None:
        same_body(row, digest)
    return row


def not_anothers(row: Any, owner: int | None) -> None:
    """Raise Conflict when ``row`` (made under the request's key) belongs to a user other
    than ``owner`` (a viewer's or analyst's own id; None: may see every user's): its view
    is not theirs to be given back."""
    if owner is not None and getattr(row, "user_id", None) != owner:
        raise Conflict(f"This {HEADER} was already used by another request.")


def same_body(row: Any, digest: str) -> None:
    """Raise Conflict unless ``row`` (made under the request's key) was made from a body
    hashed ``digest``."""
    if row.request_hash != digest:
        raise Conflict(f"This {HEADER} was already used with a different request body.")


def after_race(session: Callable[[], Any], model: type[Row], tenant_id: int, key: str | None,
               digest: str, present: Callable[[Session, Row], View], *, otherwise: str) -> View:
    """After a unique-index violation on insert: ``present(s, row)`` of the row the
    concurrent request with the same key made, read in a new ``session()``. Without a
    key (or when none is found) the violation was something else: Conflict, saying
    ``otherwise``."""
    with session() as s:
        row = earlier(s, model, tenant_id, key, digest) if key else None
        if row is None:
            raise Conflict(otherwise)
        return present(s, row)
