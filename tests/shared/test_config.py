"""Settings: the one reader of the environment, with safe production defaults."""
from __future__ import annotations

from decimal import Decimal

import pytest
from cryptography.fernet import Fernet
from pydantic import ValidationError

from shared.claude_models import ModelPrice
from shared.config import Settings


def test_environment_variables_are_read_with_the_sunrise_prefix(monkeypatch):
    monkeypatch.setenv("SUNRISE_MAX_TOOL_ROUNDS", "3")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    settings = Settings()
    assert settings.max_tool_rounds == 3
    assert settings.anthropic_base_url == "http://127.0.0.1:9"


def test_production_refuses_default_secrets_and_disabled_auth():
    with pytest.raises(ValidationError, match="WEBHOOK_SECRET"):
        Settings(env="production")
    with pytest.raises(ValidationError, match="AUTH=disabled"):
        Settings(env="production", webhook_secret="s3cret", auth="disabled")
    with pytest.raises(ValidationError, match="SECRET_KEYS"):
        Settings(env="production", webhook_secret="s3cret")
    assert Settings(env="production", webhook_secret="s3cret",
                    secret_keys=Fernet.generate_key().decode()).auth == "required"


def test_a_secret_key_that_is_not_a_fernet_key_is_refused_naming_which():
    good = Fernet.generate_key().decode()
    with pytest.raises(ValidationError, match="key 2 of SUNRISE_SECRET_KEYS"):
        Settings(secret_keys=f"{good},not-a-key")


def test_prices_match_dated_model_ids_and_default_cache_multipliers():
    settings = Settings()
    price = settings.price_for("claude-sonnet-4-5-20250929")
    assert price == settings.price_for("claude-sonnet-4-5")
    bare = ModelPrice(input=Decimal(2), output=Decimal(8))
    assert bare.write_price() == Decimal("2.5") and bare.write_1h_price() == Decimal(4)
    assert bare.read_price() == Decimal("0.2")
    explicit = ModelPrice(input=Decimal(2), output=Decimal(8), cache_write=Decimal(3),
                          cache_read=Decimal("0.5"))
    assert (explicit.write_price(), explicit.read_price()) == (Decimal(3), Decimal("0.5"))


def test_sunrise_prices_overrides_the_table_by_exact_id_then_longest_prefix(monkeypatch):
    monkeypatch.setenv("SUNRISE_PRICES", '{"claude-sonnet-4": {"input": 7, "output": 9}}')
    settings = Settings()
    assert settings.price_for("claude-sonnet-4-6").input == Decimal(7)
    assert settings.price_for("claude-opus-4-6").input == Decimal(5), "the table otherwise"
    assert settings.price_for("claude-unknown-1") is None


def test_thinking_effort_and_max_tokens_defaults_and_environment(monkeypatch):
    settings = Settings()
    assert (settings.thinking, settings.effort) == ("adaptive", "medium")
    assert settings.max_tokens >= 16_000
    monkeypatch.setenv("SUNRISE_THINKING", "between_tools")
    monkeypatch.setenv("SUNRISE_EFFORT", "low")
    assert (Settings().thinking, Settings().effort) == ("between_tools", "low")
    monkeypatch.setenv("SUNRISE_THINKING", "lots")
    with pytest.raises(ValidationError, match="thinking"):
        Settings()


def test_the_llm_target_says_where_calls_go():
    assert Settings(anthropic_api_key=None, anthropic_base_url=None).llm_target == "missing"
    assert Settings(anthropic_api_key="k", anthropic_base_url=None).llm_target == "claude"
    assert Settings(anthropic_api_key=None,
                    anthropic_base_url="http://127.0.0.1:1").llm_target == "custom"


@pytest.mark.parametrize("url", ["unix:///run/redis.sock", "http://127.0.0.1:6379/0",
                                 "127.0.0.1:6379"])
def test_a_redis_url_celery_cannot_use_is_refused_plainly(url):
    with pytest.raises(ValidationError, match=r"must start with redis:// \(or rediss://"):
        Settings(redis_url=url)


@pytest.mark.parametrize("url", ["redis://127.0.0.1:6379/0", "rediss://cache.example:6380/1",
                                 "REDIS://127.0.0.1/0"])
def test_redis_and_rediss_urls_are_taken(url):
    assert Settings(redis_url=url).redis_url == url
