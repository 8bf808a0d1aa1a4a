"""API keys are shown once and stored only as a hash (real MariaDB)."""
from __future__ import annotations

import uuid

from sqlalchemy import select

from shared.db import session_scope
from shared.keys import create_key, hash_key, tenant_for_key
from shared.models import ApiKey


def test_only_the_hash_is_stored_and_the_key_finds_its_tenant(settings):
    name = f"keys-{uuid.uuid4().hex[:8]}"
    with session_scope(settings.database_url) as s:
        key = create_key(s, name)
    with session_scope(settings.database_url) as s:
        stored = s.scalars(select(ApiKey.key_hash)).all()
        assert hash_key(key) in stored and key not in stored
        assert tenant_for_key(s, key).name == name
        assert tenant_for_key(s, key + "x") is None


def test_two_keys_of_one_tenant_share_it(settings):
    name = f"keys-{uuid.uuid4().hex[:8]}"
    with session_scope(settings.database_url) as s:
        first, second = create_key(s, name), create_key(s, name)
    with session_scope(settings.database_url) as s:
        assert first != second
        assert tenant_for_key(s, first).id == tenant_for_key(s, second).id
