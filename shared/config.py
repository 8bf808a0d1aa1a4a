"""The one reader of the environment: a typed, validated Settings object.

Every other module receives settings (or values taken from them) as arguments;
nothing else reads ``os.environ``. ``ANTHROPIC_API_KEY`` and
``ANTHROPIC_BASE_URL`` are read here too, under the names the SDK uses, so the
worker can pass them on explicitly.
"""
from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AliasChoices, Field, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from shared.claude_models import ModelPrice
from shared.claude_models import price_for as table_price
from shared.sealed import DEV_SECRET_KEYS, check_keys

PROJECT_ROOT = Path(__file__).resolve().parent.parent
VAR_DIR = PROJECT_ROOT / "var"

DEFAULT_MODEL = "claude-sonnet-5-5"


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

    # The agent loop. Thinking and effort are explained in docs/model.md ("How an answer is
    # made"); max_tokens caps thinking plus the answer, so it leaves room for both
    # (and is lowered to the model's own output limit when that is smaller).
    thinking: Literal["adaptive", "between_tools", "off"] = "adaptive"
    effort: Literal["low", "medium", "high", "xhigh", "max"] = "medium"
    max_tokens: int = Field(default=16_000, ge=1)
    max_tool_rounds: int = 8
    history_turns: int = 20
    history_token_budget: int = 20_000
    llm_timeout_s: float = 60.0
    llm_max_retries: int = 4
    # The Anthropic SDK's OpenTelemetry spans of each model call. Off: no tracer provider
    # is set up here, so the spans recorded nothing, yet building their attributes cost
    # every call CPU (≈ 2 % of a job's in the worker).
    llm_tracing: bool = False
    # OpenTelemetry traces (shared/tracing.py): on when the standard endpoint variable is
    # set (OTLP/HTTP; the exporter reads the other OTEL_EXPORTER_OTLP_* itself). Questions,
    # answers and SQL text join the spans only when capture_content is true.
    otel_exporter_otlp_endpoint: str | None = Field(
        default=None, validation_alias=AliasChoices("OTEL_EXPORTER_OTLP_ENDPOINT",
                                                    "SUNRISE_OTEL_EXPORTER_OTLP_ENDPOINT"))
    otel_capture_content: bool = False
    job_deadline_s: float = 300.0
    cache_messages: bool = True
    # What the model is sent. The defaults ship; the other values exist so that
    # bench/token_efficiency.py can measure a naive baseline and each saving alone.
    system_cache: bool = True  # cache_control on the system prompt block
    tool_result_format: Literal["csv", "json"] = "csv"
    tool_result_max_rows: int = 25  # rows listed before the summary; 0: every row kept
    # Price overrides (JSON, USD per MTok) on top of shared/claude_models.py's table.
    prices: dict[str, ModelPrice] = Field(default_factory=dict)

    # The SQL tool. Each query runs in one of up to sql_processes SQL processes per
    # worker (engine/sql/sandbox.py), each capped at sql_memory_limit (DuckDB) plus 2 GiB
    # of address space and sql_temp_max of spill files.
    sql_timeout_s: float = 10.0
    sql_memory_limit: str = "1GB"
    sql_threads: int = 2
    sql_processes: int = 2
    sql_temp_max: str = "1GB"
    chart_row_limit: int = 5000  # rows of one result kept for charts...
    sql_result_max_bytes: int = 2_000_000  # ...and at most this much of their text

    # The API.
    max_body_bytes: int = 5_000_000  # 500 questions of 8000 characters fit
    rate_limit_per_minute: int = 120  # requests of one tenant, reads included
    question_limit_per_minute: int = 500  # questions asked (a batch of N counts N)
    max_concurrent_jobs: int = 50
    # Each API process remembers a valid key's tenant this long (api/tenant_cache.py):
    # a revoked key keeps working for at most this many seconds; 0 checks every request.
    key_cache_s: float = Field(default=5.0, ge=0)
    max_batch_questions: int = 500
    long_poll_max_s: int = 30
    sse_heartbeat_s: float = 15.0
    events_ttl_s: int = 24 * 3600
    events_maxlen: int = 2000
    # A running job publishes the answer as it is written (and the progress waiting with
    # it) at most this often: the answer text at most once per period, and a read of the
    # model's stream starts a round trip only this long after the job's last one. 0 sends
    # at every read. The terminal event always carries what is still waiting before it.
    event_flush_ms: int = Field(default=100, ge=0)

    # The worker and the reaper.
    worker_concurrency: int = 64
    # Celery task events (task-sent/received/succeeded), for `celery events` and Flower.
    # Off by default: they cost every job a few messages through Redis; Flower turns
    # them on in running workers itself (`enable_events`), `celery events` needs this.
    task_events: bool = False
    heartbeat_s: float = 5.0
    stale_after_s: float = 60.0
    requeue_queued_after_s: float = 30.0
    reaper_interval_s: float = 10.0
    max_attempts: int = 3
    # Each worker process serves Prometheus metrics on the first free port from here
    # (worker/observability.py); 0 turns it off. Containers set the host to 0.0.0.0.
    worker_metrics_host: str = "127.0.0.1"
    worker_metrics_port: int = 9808
    # The allocations (net of frees) that start a young-generation collection in a
    # worker (CPython's default: 700). A job allocates enough that at 700 the objects of
    # jobs still running were promoted to the older generations and walked again there.
    worker_gc_young_threshold: int = Field(default=7000, ge=1)

    # Outbound connections a tenant names (dataset sources, webhooks): shared/outbound.py,
    # docs/outbound.md. Public addresses are allowed; private, loopback, link-local and
    # metadata ones only when listed here (comma-separated host[:port] or CIDR); the app's
    # database and Redis never. Drivers wait at most connect_timeout_s to connect and
    # read_timeout_s for one read or write.
    outbound_allow: Annotated[list[str], NoDecode] = Field(default_factory=list)
    outbound_connect_timeout_s: float = Field(default=10.0, gt=0)
    outbound_read_timeout_s: float = Field(default=300.0, gt=0)

    # Batches. webhook_allowed_hosts: deprecated, merged into outbound_allow.
    webhook_allowed_hosts: list[str] = Field(default_factory=list)
    webhook_secret: str = "dev-webhook-secret"
    webhook_timeout_s: float = 10.0
    webhook_max_attempts: int = 5
    webhook_backoff_s: float = 1.0
    # Schedules (shared/schedules/, docs/schedules.md): the SMTP server reports are mailed
    # through (smtp://[user:pass@]host:port for STARTTLS when offered, smtps:// for
    # implicit TLS; ?from=address), the public URL report links start with, and how
    # often the beat looks for due schedules. Deliveries reuse webhook_timeout_s,
    # webhook_max_attempts and webhook_backoff_s.
    smtp_url: str = "smtp://127.0.0.1:25"
    public_url: str = "http://127.0.0.1:8000"
    schedules_tick_s: float = Field(default=20.0, gt=0)
    # Economy mode polls a Message Batch with growing pauses up to this, and gives up
    # after the API's own 24 h expiry.
    economy_poll_max_s: float = 30.0
    economy_max_wait_s: float = 25 * 3600.0

    # Datasets (engine/datasets): one DuckDB file per dataset version under data_dir,
    # a shared volume when workers span hosts.
    data_dir: str = str(VAR_DIR / "data")
    max_upload_mb: int = 1024  # per source file; the API answers 413 above it
    import_threads: int = 2
    import_memory_limit: str = "2GB"
    # Each import runs in a process of its own (worker/datasets/import_process.py) whose address
    # space is capped at this size ("" means import_memory_limit plus 2 GiB), stopped
    # after import_deadline_s; at most import_concurrency imports at once per worker
    # process, so that imports never take all of a worker's threads from chat.
    import_max_memory: str = ""
    import_deadline_s: float = Field(default=1800.0, gt=0)
    import_concurrency: int = Field(default=2, ge=1)
    # An import that finds every slot taken is sent again after this many seconds.
    import_busy_retry_s: float = Field(default=5.0, gt=0)
    # What one import may read (engine/datasets/limits.py): uncompressed bytes of all its
    # sources, rows of all its tables, columns of one table, cells of one Excel sheet's
    # used range (what the Excel reader allocates, ~40 bytes a cell), and the memory of
    # the connection that reads an uploaded DuckDB file.
    import_max_bytes: int = Field(default=10 * 2**30, ge=1)
    import_max_rows: int = Field(default=100_000_000, ge=1)
    import_max_columns: int = Field(default=2_000, ge=1)
    import_max_sheet_cells: int = Field(default=10_000_000, ge=1)
    import_source_memory_limit: str = "1GB"
    # Per-tenant quota (api/services/dataset_quota.py): datasets not deleted, and bytes
    # stored under data_dir for them (sources and every version). 0 means unlimited.
    tenant_max_datasets: int = Field(default=100, ge=0)
    tenant_max_bytes: int = Field(default=50 * 2**30, ge=0)
    # The whole per-dataset system prompt, estimated as worker/jobs/history.estimate_tokens does.
    dataset_prompt_token_budget: int = 16_000
    # Fernet keys sealing stored secrets (a live dataset's URL), comma-separated: the
    # first seals, all open (shared/sealed.py). The default is public: development only.
    secret_keys: str = DEV_SECRET_KEYS

    # Console sign-in with OpenID Connect (api/signin/, docs/oidc.md): on when the issuer,
    # client id and secret are set. People signed in land in oidc_tenant; their role is
    # the highest that oidc_roles maps one of the oidc_role_claim values to
    # ("admins=admin,analysts=analyst"), else oidc_default_role. oidc_redirect_uri is the
    # callback URL registered at the provider (default: this server's own, as requested).
    oidc_issuer: str | None = None
    oidc_client_id: str | None = None
    oidc_client_secret: str | None = None
    oidc_tenant: str = "default"
    oidc_scopes: str = "openid email profile"
    oidc_role_claim: str = "groups"
    oidc_roles: Annotated[dict[str, str], NoDecode] = Field(default_factory=dict)
    oidc_default_role: Literal["viewer", "analyst", "admin", "owner"] = "viewer"
    oidc_redirect_uri: str | None = None
    oidc_timeout_s: float = Field(default=10.0, gt=0)

    @property
    def oidc_enabled(self) -> bool:
        return bool(self.oidc_issuer and self.oidc_client_id and self.oidc_client_secret)

    @field_validator("oidc_roles", mode="before")
    @classmethod
    def _role_mapping(cls, value):
        # "admins=admin,analysts=analyst" as documented; a JSON object too (how
        # tests/utils/live_api.py hands dict settings to a child process).
        if isinstance(value, str) and value.lstrip().startswith("{"):
            value = json.loads(value)
        if isinstance(value, str):
            pairs = [item.partition("=") for item in value.split(",") if item.strip()]
            value = {claim.strip(): role.strip() for claim, _, role in pairs}
        roles = ("viewer", "analyst", "admin", "owner")
        for claim, role in dict(value).items():
            if not claim or role not in roles:
                raise ValueError(f"SUNRISE_OIDC_ROLES: {claim!r}={role!r} must be "
                                 f"<claim value>=<{'|'.join(roles)}>")
        return value

    @field_validator("outbound_allow", mode="before")
    @classmethod
    def _comma_separated(cls, value):
        # Comma-separated as documented; a JSON list too (how tests/utils/live_api.py and
        # other tools hand list settings to a child process).
        if isinstance(value, str) and value.lstrip().startswith("["):
            return json.loads(value)
        if isinstance(value, str):
            return [item.strip() for item in value.split(",") if item.strip()]
        return value

    @field_validator("outbound_allow", "webhook_allowed_hosts")
    @classmethod
    def _allow_entries(cls, entries: list[str]) -> list[str]:
        from shared.outbound import AllowEntry

        for entry in entries:
            AllowEntry.parse(entry)  # ValueError names the entry
        return entries

    @field_validator("redis_url")
    @classmethod
    def _broker_url(cls, url: str) -> str:
        # One URL serves the broker, the events and the rate limits; Celery's Redis
        # transport takes redis:// and rediss:// only (a Unix socket would be socket://
        # there but unix:// for redis-py), so anything else fails here, said plainly,
        # rather than at the first job as "No such transport".
        scheme = url.partition("://")[0].lower()
        if scheme not in ("redis", "rediss"):
            raise ValueError(f"SUNRISE_REDIS_URL must start with redis:// (or rediss:// for "
                             f"TLS), not {scheme + '://' if '://' in url else repr(url)}: "
                             "it is Celery's broker too, which takes no other kind")
        return url

    @model_validator(mode="after")
    def _refuse_default_secrets_in_production(self) -> Settings:
        if self.env == "production" and self.webhook_secret == "dev-webhook-secret":
            raise ValueError("SUNRISE_WEBHOOK_SECRET must be set in production")
        if self.env == "production" and self.auth != "required":
            raise ValueError("SUNRISE_AUTH=disabled is refused in production")
        if self.env == "production" and DEV_SECRET_KEYS in self.secret_keys:
            raise ValueError("SUNRISE_SECRET_KEYS must be set in production (the default "
                             "key is public)")
        check_keys(self.secret_keys)
        return self

    def price_for(self, model: str) -> ModelPrice | None:
        """The price of ``model`` (SUNRISE_PRICES first, then the table); None if unknown."""
        return table_price(model, self.prices)

    @property
    def llm_target(self) -> Literal["claude", "custom", "missing"]:
        """Where the worker's LLM calls go: Claude (a key and no base URL), a configured
        base URL (the offline model, a proxy), or nowhere because nothing is set."""
        if self.anthropic_base_url:
            return "custom"
        return "claude" if self.anthropic_api_key else "missing"


@functools.cache
def get_settings() -> Settings:
    """The process-wide settings, read from the environment once on first use."""
    return Settings()
