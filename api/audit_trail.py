"""Recording what a request changed in the audit log, as the request's actor."""
from __future__ import annotations

from typing import Any

from api.acting import current_principal
from api.authz import actor
from api.resources import resources
from shared.audit import record


def note(action: str, target: str | None = None, details: dict[str, Any] | None = None) -> None:
    """Append ``action`` on ``target`` to the log, in a transaction of its own: called
    once the change it describes is committed."""
    with resources().session() as s:
        record(s, current_principal().tenant_id, action, actor=actor(),
               user_id=current_principal().user_id, target=target, details=details)
