"""``sunrise keys create --scopes/--user``, ``sunrise users create`` (a one-time sign-in
link) and ``sunrise audit export`` (issue 35)."""
from __future__ import annotations

import json

import pytest

from shared.db import session_scope
from shared.keys import grant_for_key
from shared.people import redeem_sign_in_link
from tests.cli.test_cli import cli_env, sunrise  # noqa: F401  (the fixture)

pytestmark = pytest.mark.slow


def test_users_keys_and_audit_from_the_command_line(cli_env, tmp_path):  # noqa: F811
    assert sunrise(cli_env, "db", "upgrade").returncode == 0
    made = sunrise(cli_env, "users", "create", "--tenant", "acme", "--email",
                   "Ann@Example.com", "--role", "analyst", "--url", "https://sunrise.example/")
    assert made.returncode == 0, made.stderr
    link = made.stdout.strip().splitlines()[-1]
    assert link.startswith("https://sunrise.example/v1/sign-in/")

    narrow = sunrise(cli_env, "keys", "create", "--tenant", "acme", "--scopes", "ask,act_as")
    personal = sunrise(cli_env, "keys", "create", "--tenant", "acme", "--user",
                       "ann@example.com")
    assert narrow.returncode == 0 and personal.returncode == 0, personal.stderr
    with session_scope(cli_env["SUNRISE_DATABASE_URL"]) as s:
        grant = grant_for_key(s, narrow.stdout.strip().splitlines()[-1])
        assert grant.scopes == {"ask", "act_as"} and grant.user_id is None
        own = grant_for_key(s, personal.stdout.strip().splitlines()[-1])
        assert own.user_id is not None and own.scopes == {"ask", "datasets", "admin", "act_as"}
        user = redeem_sign_in_link(s, link.rsplit("/", 1)[1])
        assert user.email == "ann@example.com" and user.role == "analyst"

    bad = sunrise(cli_env, "keys", "create", "--tenant", "acme", "--scopes", "ask,root")
    assert bad.returncode != 0 and "scopes must be some of" in bad.stderr
    nobody = sunrise(cli_env, "keys", "create", "--tenant", "acme", "--user", "zed@x.io")
    assert nobody.returncode != 0 and "no user 'zed@x.io'" in nobody.stderr
    role = sunrise(cli_env, "users", "create", "--tenant", "acme", "--email", "a@b.c",
                   "--role", "god")
    assert role.returncode != 0

    out = tmp_path / "audit.jsonl"
    exported = sunrise(cli_env, "audit", "export", "--tenant", "acme", "--from",
                       "2000-01-01", "-o", str(out))
    assert exported.returncode == 0, exported.stderr
    entries = [json.loads(line) for line in out.read_text().splitlines()]
    assert [e["action"] for e in entries] == ["user.create", "key.create", "key.create"]
    assert all(e["actor"] == "cli" for e in entries)
    assert "3 entries" in exported.stderr
    missing = sunrise(cli_env, "audit", "export", "--tenant", "nobody")
    assert missing.returncode != 0 and "no tenant named 'nobody'" in missing.stderr
