"""Settings: the one reader of the environment, with safe production defaults."""
from __future__ import annotations

from decimal import Decimal

import pytest
from pydantic import ValidationError

from shared.config import ModelPrice, Settings


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
    assert Settings(env="production", webhook_secret="s3cret").auth == "required"


def test_prices_match_dated_model_ids_and_default_cache_multipliers():
    settings = Settings()
    price = settings.price_for("claude-sonnet-4-5-20250929")
    assert price == settings.prices["claude-sonnet-4-5"]
    assert price.write_price() == price.input * Decimal("1.25")
    assert price.read_price() == price.input * Decimal("0.1")
    explicit = ModelPrice(input=Decimal(2), output=Decimal(8), cache_write=Decimal(3),
                          cache_read=Decimal("0.5"))
    assert (explicit.write_price(), explicit.read_price()) == (Decimal(3), Decimal("0.5"))
