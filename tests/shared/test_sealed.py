"""Stored secrets sealed with Fernet: round trip, key rotation, a removed key, rows from
before sealing; and ``sunrise db reseal`` on real MariaDB rows."""
from __future__ import annotations

import pytest
from click.testing import CliRunner
from cryptography.fernet import Fernet
from sqlalchemy import select

from shared.config import get_settings
from shared.db import session_scope
from shared.keys import get_or_create_tenant
from shared.models import Dataset, new_id
from shared.sealed import PREFIX, UnreadableSecret, seal, unseal
from sunrise.cli.main import main

URL = "postgresql://reader:pa55-word@db:5432/shop"


def test_a_sealed_secret_opens_with_its_key_and_shows_nothing_of_itself():
    key = Fernet.generate_key().decode()
    stored = seal(key, URL)
    assert stored.startswith(PREFIX) and "pa55" not in stored and "reader" not in stored
    assert unseal(key, stored) == URL
    assert seal(key, URL) != stored, "a fresh nonce each time"


def test_rotation_a_new_first_key_seals_and_the_old_one_still_opens():
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    by_old = seal(old, URL)
    assert unseal(f"{new},{old}", by_old) == URL
    by_new = seal(f"{new},{old}", URL)
    assert unseal(new, by_new) == URL
    with pytest.raises(UnreadableSecret, match="SUNRISE_SECRET_KEYS"):
        unseal(new, by_old)  # the old key dropped before re-sealing


def test_a_value_from_before_sealing_is_read_as_it_is():
    assert unseal(Fernet.generate_key().decode(), URL) == URL


def test_reseal_seals_old_rows_and_moves_sealed_ones_to_the_first_key(settings, monkeypatch):
    from tests.utils.live_api import settings_env

    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    with session_scope(settings.database_url) as s:
        tenant = get_or_create_tenant(s, f"reseal-{new_id()[:8]}")
        plain, sealed = new_id(), new_id()
        for dataset_id, url in ((plain, URL), (sealed, seal(old, URL))):
            s.add(Dataset(id=dataset_id, tenant_id=tenant.id, name="Live", status="ready",
                          import_seq=1, sources=[{"url": "masked"}], annotations={},
                          is_default=False, source_url=url))
    def reseal(keys: str):
        for name, value in settings_env(settings, secret_keys=keys).items():
            monkeypatch.setenv(name, value)
        get_settings.cache_clear()  # the CLI reads the environment once per process
        try:
            return CliRunner().invoke(main, ["db", "reseal"])
        finally:
            get_settings.cache_clear()

    # Without the key that sealed a row, that row is named and kept; the others move.
    missing = reseal(new)
    assert missing.exit_code == 1 and sealed in missing.output, missing.output
    # Other tests' datasets in this database were sealed with the session's key.
    result = reseal(f"{new},{old},{settings.secret_keys}")
    assert result.exit_code == 0, result.output
    with session_scope(settings.database_url) as s:
        stored = dict(s.execute(select(Dataset.id, Dataset.source_url)
                                .where(Dataset.id.in_([plain, sealed]))).all())
    for value in stored.values():
        assert value.startswith(PREFIX) and "pa55" not in value
        assert unseal(new, value) == URL, "the old key can go now"
