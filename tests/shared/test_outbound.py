"""The outbound policy: public addresses pass, the rest only when listed, the app's database
and Redis never; resolved names are judged by every address, and a connect-time check
judges the address a socket really reached."""
from __future__ import annotations

import pytest

from shared.config import Settings
from shared.errors import OutboundRefused
from shared.outbound import OutboundPolicy, endpoint_of


def _policy(base_settings, *allow: str) -> OutboundPolicy:
    return OutboundPolicy.from_settings(base_settings.model_copy(
        update={"outbound_allow": list(allow), "webhook_allowed_hosts": []}))


@pytest.mark.parametrize("address, kind", [
    ("127.0.0.1", "loopback"), ("::1", "loopback"), ("::ffff:127.0.0.1", "loopback"),
    ("10.1.2.3", "private"), ("192.168.0.9", "private"), ("fd12::1", "private"),
    ("169.254.169.254", "cloud metadata"), ("fd00:ec2::254", "cloud metadata"),
    ("169.254.1.1", "link-local"), ("100.64.0.1", "shared (CGNAT)"),
    ("0.0.0.0", "unspecified"), ("224.0.0.1", "multicast"), ("240.0.0.1", "reserved"),
    ("2002:7f00:1::", "loopback"),  # 6to4 around 127.0.0.1
])
def test_non_public_addresses_are_refused_unless_listed(base_settings, address, kind):
    with pytest.raises(OutboundRefused) as caught:
        _policy(base_settings).check_address(address, 5432)
    assert f"is a {kind} address" in caught.value.detail
    assert "SUNRISE_OUTBOUND_ALLOW" in caught.value.detail


def test_public_addresses_pass_and_listing_opens_the_rest(base_settings):
    _policy(base_settings).check_address("93.184.216.34", 5432)
    listed = _policy(base_settings, "10.0.0.0/8", "192.168.0.9:5432", "[fd12::1]")
    listed.check_address("10.200.0.1", 3306)
    listed.check_address("192.168.0.9", 5432)
    listed.check_address("fd12::1", 443)
    with pytest.raises(OutboundRefused):
        listed.check_address("192.168.0.9", 3306)  # listed with another port


def test_a_name_resolving_to_loopback_is_refused_unless_listed(base_settings):
    with pytest.raises(OutboundRefused, match="localhost:5432 is a loopback address"):
        _policy(base_settings).resolve("localhost", 5432)
    assert "127.0.0.1" in _policy(base_settings, "127.0.0.1").resolve("localhost", 5432)
    assert _policy(base_settings, "LOCALHOST:5432").resolve("localhost", 5432)


def test_metadata_needs_its_exact_address_listed(base_settings):
    for allow in ("169.254.0.0/16", "0.0.0.0/0", "fd00::/8"):
        for address in ("169.254.169.254", "fd00:ec2::254"):
            with pytest.raises(OutboundRefused, match="metadata"):
                _policy(base_settings, allow).check_address(address, 80)
    _policy(base_settings, "169.254.169.254").check_address("169.254.169.254", 80)


def test_the_app_database_is_never_a_destination_even_listed(base_settings):
    host, port = endpoint_of(base_settings.database_url)
    app_db = base_settings.database_url.rsplit("/", 1)[1].split("?")[0]
    policy = _policy(base_settings, "127.0.0.0/8", "0.0.0.0", "::1", host)
    for address in ("127.0.0.1", "127.0.0.2", "0.0.0.0", "::1", "::ffff:127.0.0.1"):
        with pytest.raises(OutboundRefused, match="the app's database"):
            policy.check_address(address, port, database=app_db)
        with pytest.raises(OutboundRefused, match="the app's database"):
            policy.check_address(address, port, database=app_db.upper())
        with pytest.raises(OutboundRefused, match="the app's database"):
            policy.check_address(address, port)  # a webhook to the database's port
    with pytest.raises(OutboundRefused, match="never a destination"):
        policy.resolve(host, port, database=app_db)
    policy.check_address("127.0.0.1", port, database="another_db")  # same server, other db


def test_redis_is_never_a_destination_even_listed(base_settings):
    host, port = endpoint_of(base_settings.redis_url)
    policy = _policy(base_settings, "127.0.0.1", f"{host}:{port}")
    for database in (None, "0", "x"):
        with pytest.raises(OutboundRefused, match="the app's Redis"):
            policy.resolve(host, port, database=database)


def test_the_connect_time_check_refuses_an_address_the_name_no_longer_had(base_settings):
    # DNS rebinding: a name checked as public whose connection reached loopback. The
    # drivers call check_address with the socket's peer; it judges the address alone.
    policy = _policy(base_settings)
    policy.check_address("93.184.216.34", 15432, host="db.example.com")
    with pytest.raises(OutboundRefused, match="loopback"):
        policy.check_address("127.0.0.1", 15432, host="db.example.com")


def test_an_unresolvable_name_is_refused(base_settings):
    with pytest.raises(OutboundRefused, match="cannot be resolved"):
        _policy(base_settings).resolve("no-such-host.invalid", 5432)


def test_the_environment_lists_entries_comma_separated_with_the_webhook_alias(monkeypatch):
    monkeypatch.setenv("SUNRISE_OUTBOUND_ALLOW", "10.0.0.0/8, db.internal:5432,[fd12::1]:3306")
    monkeypatch.setenv("SUNRISE_WEBHOOK_ALLOWED_HOSTS", '["hooks.internal"]')
    settings = Settings()
    assert settings.outbound_allow == ["10.0.0.0/8", "db.internal:5432", "[fd12::1]:3306"]
    policy = OutboundPolicy.from_settings(settings)
    policy.check_address("10.0.0.1", 1)
    policy.check_address("10.9.9.9", 80, host="hooks.internal")  # the alias, merged
    policy.check_address("192.168.1.1", 5432, host="DB.internal.")
    monkeypatch.setenv("SUNRISE_OUTBOUND_ALLOW", "db internal")
    with pytest.raises(ValueError, match="db internal"):
        Settings()


def test_a_json_list_is_read_too(monkeypatch):
    # How list settings reach child processes (tests/utils/live_api.py's settings_env).
    monkeypatch.setenv("SUNRISE_OUTBOUND_ALLOW", '["127.0.0.1", "10.0.0.0/8"]')
    assert Settings().outbound_allow == ["127.0.0.1", "10.0.0.0/8"]
