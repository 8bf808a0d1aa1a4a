"""``sunrise keys list`` and ``keys revoke`` (issue 31, item 11): an operator lists a
tenant's keys without their secrets and revokes one without SQL."""
from __future__ import annotations

import pytest

from shared.db import session_scope
from shared.keys import tenant_for_key
from tests.cli.test_cli import cli_env, sunrise  # noqa: F401  (the fixture)

# Each command is a `sunrise` process of its own, as the other CLI tests' are.
pytestmark = pytest.mark.slow


def test_list_shows_keys_without_secrets_and_revoke_stops_the_key(cli_env):  # noqa: F811
    assert sunrise(cli_env, "db", "upgrade").returncode == 0
    first = sunrise(cli_env, "keys", "create", "--tenant", "acme").stdout.strip().splitlines()[-1]
    second = sunrise(cli_env, "keys", "create", "--tenant", "acme").stdout.strip().splitlines()[-1]
    sunrise(cli_env, "keys", "create", "--tenant", "other")
    listed = sunrise(cli_env, "keys", "list", "--tenant", "acme")
    assert listed.returncode == 0, listed.stderr
    lines = [line.split("\t") for line in listed.stdout.strip().splitlines()]
    assert [line[1] for line in lines] == [first[:16], second[:16]]
    assert all(line[3] == "-" for line in lines)
    assert first not in listed.stdout and second not in listed.stdout

    revoked = sunrise(cli_env, "keys", "revoke", lines[0][0])
    assert revoked.returncode == 0, revoked.stderr
    assert "revoked" in revoked.stdout and "from their next request" in revoked.stdout
    after = [line.split("\t") for line in
             sunrise(cli_env, "keys", "list", "--tenant", "acme").stdout.strip().splitlines()]
    assert after[0][3] != "-" and after[1][3] == "-"
    with session_scope(cli_env["SUNRISE_DATABASE_URL"]) as s:
        assert tenant_for_key(s, first) is None
        assert tenant_for_key(s, second).name == "acme"


def test_revoking_or_listing_what_does_not_exist_fails_clearly(cli_env):  # noqa: F811
    assert sunrise(cli_env, "db", "upgrade").returncode == 0
    missing = sunrise(cli_env, "keys", "revoke", "999999")
    assert missing.returncode != 0 and "no key 999999" in missing.stderr
    nobody = sunrise(cli_env, "keys", "list", "--tenant", "nobody")
    assert nobody.returncode != 0 and "no tenant named 'nobody'" in nobody.stderr
