"""The one reader of the environment: a typed, validated Settings object.

Every other module receives settings (or values taken from them) as arguments;
nothing else reads ``os.environ``. ``ANTHROPIC_API_KEY`` and
``ANTHROPIC_BASE_URL`` are read here too, under the names the SDK uses, so the
worker can pass them on explicitly.
"""
from __future__ import annotations

import functools
from decimal import Decimal
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, BaseModel, Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

PROJECT_ROOT = Path(__file__).resolve().parent.parent
VAR_DIR = PROJECT_ROOT / "var"

DEFAULT_MODEL = "claude-sonnet-5-5"


class ModelPrice(BaseModel):
    """USD per million tokens. Cache prices default to 1.25x (write) and 0.1x (read) of input."""

    input: Decimal
    output: Decimal
    cache_write: Decimal | None = None
    cache_read: Decimal | None = None

    def write_price(self) -> Decimal:
        return self.cache_write if self.cache_write is not None else self.input * Decimal("1.25")

    def read_price(self) -> Decimal:
        return self.cache_read if self.cache_read is not None else self.input * Decimal("0.1")


# List prices per million tokens; override with SUNRISE_PRICES (JSON) when they change.
DEFAULT_PRICES: dict[str, ModelPrice] = {
    "claude-sonnet-5-5": ModelPrice(input=Decimal(3), output=Decimal(15)),
    "claude-sonnet-5": ModelPrice(input=Decimal(3), output=Decimal(15)),
    "claude-sonnet-4-6": ModelPrice(input=Decimal(3), output=Decimal(15)),
    "claude-sonnet-4-5": ModelPrice(input=Decimal(3), output=Decimal(15)),
    "claude-opus-4-5": ModelPrice(input=Decimal(5), output=Decimal(25)),
    "claude-sonnet-4": ModelPrice(input=Decimal(3), output=Decimal(15)),
    "claude-opus-4-1": ModelPrice(input=Decimal(15), output=Decimal(75)),
    "claude-haiku-4-5": ModelPrice(input=Decimal(1), output=Decimal(5)),
    "claude-3-5-haiku": ModelPrice(input=Decimal("0.8"), output=Decimal(4)),
}


class Settings(BaseSettings):
    """Runtime configuration. Environment variables are prefixed ``SUNRISE_``."""

    model_config = SettingsConfigDict(env_prefix="SUNRISE_", extra="ignore")

    env: Literal["development", "test", "production"] = "development"
    database_url: str = f"sqlite:///{VAR_DIR / 'sunrise.db'}"
    redis_url: str = "redis://127.0.0.1:6379/0"
    duckdb_path: str = str(VAR_DIR / "sample.duckdb")
    model: str = DEFAULT_MODEL
    auth: Literal["required", "disabled"] = "required"
    log_format: Literal["text", "json"] = "text"

    anthropic_api_key: str | None = Field(
        default=None, validation_alias=AliasChoices("ANTHROPIC_API_KEY", "SUNRISE_ANTHROPIC_API_KEY")
    )
    anthropic_base_url: str | None = Field(
        default=None, validation_alias=AliasChoices("ANTHROPIC_BASE_URL", "SUNRISE_ANTHROPIC_BASE_URL")
    )

    # The agent loop.
    max_tokens: int = 4096
    max_tool_rounds: int = 8
    history_turns: int = 20
    history_token_budget: int = 20_000
    llm_timeout_s: float = 60.0
    llm_max_retries: int = 4
    job_deadline_s: float = 300.0
    cache_messages: bool = True
    # What the model is sent. The defaults ship; the other values exist so that
    # bench/token_efficiency.py can measure a naive baseline and each saving alone.
    system_cache: bool = True  # cache_control on the system prompt block
    tool_result_format: Literal["csv", "json"] = "csv"
    tool_result_max_rows: int = 25  # rows listed before the summary; 0: every row kept
    prices: dict[str, ModelPrice] = Field(default_factory=lambda: dict(DEFAULT_PRICES))

    # The SQL tool.
    sql_timeout_s: float = 10.0
    sql_memory_limit: str = "1GB"
    sql_threads: int = 2
    chart_row_limit: int = 5000

    # The API.
    max_body_bytes: int = 5_000_000  # 500 questions of 8000 characters fit
    rate_limit_per_minute: int = 120
    max_concurrent_jobs: int = 50
    max_batch_questions: int = 500
    long_poll_max_s: int = 30
    sse_heartbeat_s: float = 15.0
    events_ttl_s: int = 24 * 3600
    events_maxlen: int = 2000

    # The worker and the reaper.
    worker_concurrency: int = 64
    heartbeat_s: float = 5.0
    stale_after_s: float = 60.0
    requeue_queued_after_s: float = 30.0
    reaper_interval_s: float = 10.0
    max_attempts: int = 3
    # Each worker process serves Prometheus metrics on the first free port from here
    # (worker/observability.py); 0 turns it off. Containers set the host to 0.0.0.0.
    worker_metrics_host: str = "127.0.0.1"
    worker_metrics_port: int = 9808

    # Batches.
    webhook_allowed_hosts: list[str] = Field(default_factory=list)
    webhook_secret: str = "dev-webhook-secret"
    webhook_timeout_s: float = 10.0
    webhook_max_attempts: int = 5
    webhook_backoff_s: float = 1.0
    # Economy mode polls a Message Batch with growing pauses up to this, and gives up
    # after the API's own 24 h expiry.
    economy_poll_max_s: float = 30.0
    economy_max_wait_s: float = 25 * 3600.0

    # Datasets (worker/datasets): one DuckDB file per dataset version under data_dir,
    # a shared volume when workers span hosts.
    data_dir: str = str(VAR_DIR / "data")
    max_upload_mb: int = 1024  # per source file; the API answers 413 above it
    import_threads: int = 2
    import_memory_limit: str = "2GB"
    # The whole per-dataset system prompt, estimated as worker/history.estimate_tokens does.
    dataset_prompt_token_budget: int = 16_000

    @model_validator(mode="after")
    def _refuse_default_secrets_in_production(self) -> Settings:
        if self.env == "production" and self.webhook_secret == "dev-webhook-secret":
            raise ValueError("SUNRISE_WEBHOOK_SECRET must be set in production")
        if self.env == "production" and self.auth != "required":
            raise ValueError("SUNRISE_AUTH=disabled is refused in production")
        return self

    def price_for(self, model: str) -> ModelPrice:
        """The price of ``model``: exact id, else the longest known id it starts with."""
        if model in self.prices:
            return self.prices[model]
        for known in sorted(self.prices, key=len, reverse=True):
            if model.startswith(known):
                return self.prices[known]
        return self.prices.get(DEFAULT_MODEL, DEFAULT_PRICES[DEFAULT_MODEL])


@functools.cache
def get_settings() -> Settings:
    """The process-wide settings, read from the environment once on first use."""
    return Settings()
