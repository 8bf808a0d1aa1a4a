"""Keyset pagination for the list endpoints: newest first on (a timestamp, the id).

A cursor is the last row's (timestamp, id), opaque to clients (URL-safe base64), so
pages neither repeat nor skip rows that stay put, whatever is added meanwhile.
"""
from __future__ import annotations

import base64
import binascii
import datetime as dt
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from sqlalchemy import Select, or_

from shared.errors import BadRequest

Row = TypeVar("Row")


def after_cursor(stmt: Select, stamp_col: Any, id_col: Any, cursor: str | None) -> Select:
    """``stmt`` newest first, limited to the rows after ``cursor`` (all when None).
    Raises BadRequest for a cursor this API did not issue."""
    if cursor:
        stamp, row_id = _decode(cursor)
        stmt = stmt.where(or_(stamp_col < stamp, (stamp_col == stamp) & (id_col < row_id)))
    return stmt.order_by(stamp_col.desc(), id_col.desc())


def page(rows: Sequence[Row], limit: int, key: Callable[[Row], tuple[dt.datetime, str]],
         view: Callable[[Row], dict]) -> dict:
    """``{"items", "next_cursor"}`` from up to ``limit + 1`` rows fetched newest first."""
    shown = rows[:limit]
    return {"items": [view(row) for row in shown],
            "next_cursor": _encode(*key(shown[-1])) if len(rows) > limit else None}


def _encode(stamp: dt.datetime, row_id: str) -> str:
    return base64.urlsafe_b64encode(f"{stamp.isoformat()}|{row_id}".encode()).decode()


def _decode(cursor: str) -> tuple[dt.datetime, str]:
    try:
        stamp, sep, row_id = base64.urlsafe_b64decode(cursor.encode()).decode().partition("|")
        if not sep or not row_id:
            raise ValueError("no id")
        return dt.datetime.fromisoformat(stamp), row_id
    except (ValueError, UnicodeDecodeError, binascii.Error) as exc:
        raise BadRequest("The cursor is not one this API returned.") from exc
