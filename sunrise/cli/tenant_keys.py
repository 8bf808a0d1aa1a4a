"""An API key for a tenant, for CLI commands run by an operator on the deployment's
own machine (``--tenant NAME`` instead of ``--key``).

Only a key's hash is stored in the app database, so the key minted for a tenant is kept
in a file readable by this user alone (``var/cli-keys/<tenant>.key``, mode 0600) and
reused while the database still accepts it for that tenant; otherwise (a new tenant, a
revoked key, another database) a new one is minted and the file replaced.
``dataset_owner_name`` finds whose key a command about one dataset needs.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

from sqlalchemy import select

from shared.config import VAR_DIR, Settings
from shared.db import session_scope
from shared.keys import create_key, tenant_for_key
from shared.models import Dataset, Tenant

KEY_DIR = VAR_DIR / "cli-keys"


def tenant_key(settings: Settings, tenant: str, key_dir: Path = KEY_DIR) -> str:
    """A key of ``tenant`` (created with the tenant if new) that the app database at
    ``settings.database_url`` accepts. Side effects: may add a tenant and a key row,
    and (re)write the tenant's key file."""
    path = key_dir / f"{_file_stem(tenant, settings.database_url)}.key"
    with session_scope(settings.database_url) as s:
        if path.exists():
            kept = path.read_text(encoding="utf-8").strip()
            owner = tenant_for_key(s, kept)
            if owner is not None and owner.name == tenant:
                return kept
        key = create_key(s, tenant)
    key_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    partial = path.with_suffix(".partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(key + "\n")
    partial.replace(path)
    return key


def dataset_owner_name(settings: Settings, dataset_id: str) -> str | None:
    """The name of the tenant owning ``dataset_id`` (deleted or not), or None."""
    with session_scope(settings.database_url) as s:
        return s.scalar(select(Tenant.name).join(Dataset, Dataset.tenant_id == Tenant.id)
                        .where(Dataset.id == dataset_id))


def _file_stem(tenant: str, database_url: str) -> str:
    """One file per tenant and database; tenant names may hold any character."""
    return hashlib.sha256(f"{database_url}\n{tenant}".encode()).hexdigest()[:24]
