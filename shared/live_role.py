"""What a live dataset says about a role that can write: refused with how to make a
read-only one, or (``allow_writable_role``) accepted with a warning.

The one owner of those words: the API's check when a live dataset is created
(``api/services/live_sources.py``) and the import's on every introspection
(``worker/datasets/live_import.py``) both come here.
"""
from __future__ import annotations

from shared.errors import WritableRole

_READ_ONLY_ROLE = {
    "postgresql": ("CREATE ROLE sunrise_ro LOGIN PASSWORD '...'; GRANT CONNECT ON DATABASE "
                   "{db} TO sunrise_ro; GRANT USAGE ON SCHEMA public TO sunrise_ro; GRANT "
                   "SELECT ON ALL TABLES IN SCHEMA public TO sunrise_ro;"),
    "mysql": ("CREATE USER 'sunrise_ro'@'%' IDENTIFIED BY '...'; GRANT SELECT, SHOW VIEW ON "
              "`{db}`.* TO 'sunrise_ro'@'%';"),
}


def read_only_role_help(kind: str, database: str) -> str:
    """SQL creating a read-only role for ``kind`` ("postgresql", "mariadb", "mysql")."""
    template = _READ_ONLY_ROLE["postgresql" if kind.lower().startswith("postgres") else "mysql"]
    return template.replace("{db}", database or "<database>")


def judge_role(privilege: str | None, *, display: str, kind: str, database: str,
               allow_writable: bool) -> list[str]:
    """The dataset's warnings for a role holding ``privilege`` (None: read-only, no
    warning). Raises ``WritableRole`` when it can write and that was not allowed."""
    if privilege is None:
        return []
    if not allow_writable:
        raise WritableRole(
            f"{display}: this role can write ({privilege}). A live dataset runs "
            "model-written SQL on this database, so it needs a read-only role; create one "
            f"and use it in the URL: {read_only_role_help(kind, database)} Or send "
            "\"allow_writable_role\": true to accept this role (docs/live-datasets.md).",
            source=display, privilege=privilege)
    return [f"The source's role can write ({privilege}); it was accepted "
            "(allow_writable_role). Sunrise still runs only read-only statements in read-only "
            "transactions, but a read-only role is the safer guard."]
