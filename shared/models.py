"""SQLAlchemy 2.x typed models: the job row is the source of truth.

Timestamps are naive UTC with microseconds (DATETIME(6) on MariaDB).
"""
from __future__ import annotations

import datetime as dt
import re
import uuid
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    Numeric,
    String,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.dialects import mysql
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

UtcDateTime = DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")
LongText = Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")
Blob = LargeBinary().with_variant(mysql.LONGBLOB(), "mysql", "mariadb")
Money = Numeric(16, 8)
Id = BigInteger().with_variant(Integer(), "sqlite")


def ExactToken(length: int) -> String:  # named like the column types it stands beside
    """A string compared byte for byte: case and trailing spaces count (migration 0005)."""
    return String(length).with_variant(
        mysql.VARCHAR(length, charset="utf8mb4", collation="utf8mb4_nopad_bin"),
        "mysql", "mariadb")

def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


def iso(value: dt.datetime | None) -> str | None:
    """A stored timestamp as clients see it: ISO 8601 in UTC, ``Z``-suffixed."""
    return value.replace(tzinfo=dt.UTC).isoformat().replace("+00:00", "Z") if value else None


# Ids are lower-case UUIDs (new_id). They are compared as exact tokens: the database's
# case-insensitive collation would otherwise find a job under other spellings of its id.
ID_PATTERN = r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
_ID = re.compile(ID_PATTERN)


def new_id() -> str:
    return str(uuid.uuid4())


def is_id(value: str) -> bool:
    """True for an id spelled exactly as ``new_id`` writes them."""
    return isinstance(value, str) and _ID.match(value) is not None


class Base(DeclarativeBase):
    pass


class UsageColumns:
    """The token and cost figures kept both per LLM call and per job."""

    input_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    output_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    cache_read_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    cache_creation_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    total_effective_input: Mapped[int] = mapped_column(BigInteger, default=0)
    context_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    # Null when the model has no known price (shared/claude_models.py).
    cost_usd: Mapped[Decimal | None] = mapped_column(Money, nullable=True, default=Decimal(0))


class Tenant(Base):
    __tablename__ = "tenants"

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(ExactToken(100), unique=True)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    # What ``Sunrise-User: <unknown external id>`` does: "create" a viewer, or "refuse"
    # (``shared.people.UNKNOWN_USERS``; set by ``PATCH /v1/tenant``).
    unknown_users: Mapped[str] = mapped_column(String(16), default="create",
                                               server_default="create")


class TenantBudget(Base):
    """A tenant's cost budget (``shared/budgets.py``): limits in US dollars per UTC month
    and, optionally, per UTC day; ``on_exceed`` is ``block`` or ``warn``."""

    __tablename__ = "tenant_budgets"

    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"),
                                           primary_key=True, autoincrement=False)
    monthly_usd: Mapped[Decimal | None] = mapped_column(Money, nullable=True)
    daily_usd: Mapped[Decimal | None] = mapped_column(Money, nullable=True)
    on_exceed: Mapped[str] = mapped_column(String(8), default="block")
    updated_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)


class ApiKey(Base):
    __tablename__ = "api_keys"

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"), index=True)
    key_hash: Mapped[str] = mapped_column(ExactToken(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    revoked_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime, nullable=True)
    # Sorted scope names (shared/principal.SCOPES); migration 0012 gave old keys all.
    scopes: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)
    # A user's personal key acts as that user; null: a service key.
    user_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE", name="fk_api_keys_user"), nullable=True)


class User(Base):
    """A person of one tenant (``/v1/users``): ``external_id`` is the embedding app's or
    the identity provider's id, ``role`` one of shared/principal.ROLES."""

    __tablename__ = "users"
    __table_args__ = (
        UniqueConstraint("tenant_id", "external_id", name="uq_users_tenant_external"),
        UniqueConstraint("tenant_id", "email", name="uq_users_tenant_email"),
    )

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"))
    external_id: Mapped[str] = mapped_column(ExactToken(200))
    email: Mapped[str | None] = mapped_column(ExactToken(320), nullable=True)
    role: Mapped[str] = mapped_column(String(16), default="viewer", server_default="viewer")
    groups: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)
    attributes: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    disabled: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())


class AuditEntry(Base):
    """One line of the append-only audit log (shared/audit.py writes; nothing updates)."""

    __tablename__ = "audit_log"
    __table_args__ = (Index("ix_audit_log_tenant_at", "tenant_id", "at", "id"),)

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    tenant_id: Mapped[int] = mapped_column(Id)
    at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    user_id: Mapped[int | None] = mapped_column(Id, nullable=True)
    actor: Mapped[str] = mapped_column(String(220))
    action: Mapped[str] = mapped_column(String(64))
    target: Mapped[str | None] = mapped_column(String(200), nullable=True)
    details: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)


class ConsoleSession(Base):
    """A signed-in console session (api/sessions.py): only hashes of its tokens."""

    __tablename__ = "sessions"

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    token_hash: Mapped[str] = mapped_column(ExactToken(64), unique=True)
    csrf_hash: Mapped[str] = mapped_column(ExactToken(64))
    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    expires_at: Mapped[dt.datetime] = mapped_column(UtcDateTime)
    ended_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime, nullable=True)


class SignInLink(Base):
    """A one-time local sign-in link (``sunrise users create``), kept by hash."""

    __tablename__ = "sign_in_links"

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    token_hash: Mapped[str] = mapped_column(ExactToken(64), unique=True)
    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    expires_at: Mapped[dt.datetime] = mapped_column(UtcDateTime)
    used_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime, nullable=True)


class Conversation(Base):
    __tablename__ = "conversations"
    __table_args__ = (Index("ix_conversations_tenant_updated", "tenant_id", "updated_at"),
                      Index("ix_conversations_tenant_user", "tenant_id", "user_id"))

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"))
    title: Mapped[str] = mapped_column(String(200), default="")
    # The user it belongs to (null: the tenant's, made by a service key acting for no one).
    user_id: Mapped[int | None] = mapped_column(Id, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)


class Message(Base):
    __tablename__ = "messages"
    __table_args__ = (
        Index("ix_messages_conversation", "conversation_id", "id"),
        # One answer per job and role, whatever redeliveries happen.
        UniqueConstraint("job_id", "role", name="uq_messages_job_role"),
    )

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    conversation_id: Mapped[str] = mapped_column(
        ForeignKey("conversations.id", ondelete="CASCADE")
    )
    job_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    role: Mapped[str] = mapped_column(String(16))
    text: Mapped[str] = mapped_column(LongText)
    charts: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)


class Batch(Base):
    __tablename__ = "batches"
    __table_args__ = (
        Index("ix_batches_tenant_created", "tenant_id", "created_at"),
        Index("ix_batches_tenant_user", "tenant_id", "user_id"),
        UniqueConstraint("tenant_id", "idempotency_key", name="uq_batches_tenant_idempotency"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"))
    title: Mapped[str] = mapped_column(String(200), default="")
    mode: Mapped[str] = mapped_column(String(16), default="standard")
    # The user it belongs to (null: the tenant's, made by a service key acting for no one).
    user_id: Mapped[int | None] = mapped_column(Id, nullable=True)
    conversation_mode: Mapped[str] = mapped_column(String(16), default="separate")
    status: Mapped[str] = mapped_column(String(16), default="running")
    total: Mapped[int] = mapped_column(Integer, default=0)
    webhook_url: Mapped[str | None] = mapped_column(String(500), nullable=True)
    idempotency_key: Mapped[str | None] = mapped_column(ExactToken(200), nullable=True)
    request_hash: Mapped[str | None] = mapped_column(ExactToken(64), nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    completed_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime, nullable=True)
    # The assembled report (zlib-compressed JSON, SVGs included), written once at the end.
    report: Mapped[bytes | None] = mapped_column(Blob, nullable=True)
    webhook_status: Mapped[str | None] = mapped_column(String(16), nullable=True)
    webhook_attempts: Mapped[int] = mapped_column(Integer, default=0)


class Job(UsageColumns, Base):
    __tablename__ = "jobs"
    __table_args__ = (
        Index("ix_jobs_tenant_created", "tenant_id", "created_at"),
        Index("ix_jobs_tenant_user", "tenant_id", "user_id"),
        # A tenant's jobs in flight, counted by every submit from the index alone.
        Index("ix_jobs_tenant_status", "tenant_id", "status", "batch_id"),
        Index("ix_jobs_status_heartbeat", "status", "heartbeat_at"),
        Index("ix_jobs_batch", "batch_id"),
        Index("ix_jobs_dataset", "dataset_id", "dataset_version"),
        UniqueConstraint("tenant_id", "idempotency_key", name="uq_jobs_tenant_idempotency"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"))
    conversation_id: Mapped[str] = mapped_column(String(36), index=True)
    # The user it belongs to (null: the tenant's, made by a service key acting for no one).
    user_id: Mapped[int | None] = mapped_column(Id, nullable=True)
    batch_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    batch_index: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # The dataset the job asks about, and the version it pinned; null: the deployment's
    # built-in dataset (worker/jobs/data_source.py).
    dataset_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    dataset_version: Mapped[int | None] = mapped_column(Integer, nullable=True)
    status: Mapped[str] = mapped_column(String(16), default="queued")
    message: Mapped[str] = mapped_column(Text)
    model: Mapped[str] = mapped_column(String(100))
    queue: Mapped[str] = mapped_column(String(32), default="chat")
    idempotency_key: Mapped[str | None] = mapped_column(ExactToken(200), nullable=True)
    request_hash: Mapped[str | None] = mapped_column(ExactToken(64), nullable=True)
    attempt: Mapped[int] = mapped_column(Integer, default=0)
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False)

    answer_text: Mapped[str | None] = mapped_column(LongText, nullable=True)
    charts: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON, nullable=True)
    parse_path: Mapped[str | None] = mapped_column(String(16), nullable=True)
    truncated: Mapped[bool] = mapped_column(Boolean, default=False)
    # The faithfulness check of answer_text (worker/answer/number_check.py).
    numbers: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    error_code: Mapped[str | None] = mapped_column(String(64), nullable=True)
    error_message: Mapped[str | None] = mapped_column(Text, nullable=True)

    llm_retries: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    tool_rounds: Mapped[int] = mapped_column(Integer, default=0)
    sql_executed: Mapped[int] = mapped_column(Integer, default=0)
    sql_cache_hits: Mapped[int] = mapped_column(Integer, default=0)
    llm_ms: Mapped[int] = mapped_column(BigInteger, default=0)
    sql_ms: Mapped[int] = mapped_column(BigInteger, default=0)
    wall_ms: Mapped[int] = mapped_column(BigInteger, default=0)

    # The verified query the answer relied on ({"verified_query_id", "question"}) and a
    # clarifying question asked instead of an answer ({"question", "options"}).
    verified: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    clarification: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)

    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    enqueued_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime, nullable=True)
    started_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime, nullable=True)
    heartbeat_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime, nullable=True)
    finished_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime, nullable=True)
    # The moment the job's data is from: its first live query, or its snapshot's import.
    data_as_of: Mapped[dt.datetime | None] = mapped_column(UtcDateTime, nullable=True)


class LlmCall(UsageColumns, Base):
    __tablename__ = "llm_calls"
    __table_args__ = (
        Index("ix_llm_calls_job", "job_id"),
        Index("ix_llm_calls_tenant_created", "tenant_id", "created_at"),
    )

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    job_id: Mapped[str] = mapped_column(String(36))
    tenant_id: Mapped[int] = mapped_column(Integer)
    attempt: Mapped[int] = mapped_column(Integer, default=1)
    round: Mapped[int] = mapped_column(Integer)
    model: Mapped[str] = mapped_column(String(100))
    stop_reason: Mapped[str | None] = mapped_column(String(32), nullable=True)
    ms: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)


class ToolCall(Base):
    __tablename__ = "tool_calls"
    __table_args__ = (Index("ix_tool_calls_job", "job_id"),)

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    job_id: Mapped[str] = mapped_column(String(36))
    attempt: Mapped[int] = mapped_column(Integer, default=1)
    round: Mapped[int] = mapped_column(Integer)
    # Which tool (migration 0006; rows written before it are execute_sql calls).
    tool: Mapped[str] = mapped_column(String(64), default="execute_sql",
                                      server_default="execute_sql")
    query_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # The call's input as text: the SQL of execute_sql, the input of any other tool.
    sql: Mapped[str] = mapped_column(Text)
    rows: Mapped[int] = mapped_column(BigInteger, default=0)
    cached: Mapped[bool] = mapped_column(Boolean, default=False)
    is_error: Mapped[bool] = mapped_column(Boolean, default=False)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    ms: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)


class Dataset(Base):
    """A tenant's dataset (``/v1/datasets``): its sources, annotations and the version it
    serves. ``version`` is the newest ready version (null until the first import ends);
    ``building_version`` the one an import is making. ``source_url`` holds a live
    database's URL with its credentials, sealed (``shared/sealed.py``): it is opened
    only by the import and never returned or logged (``sources`` keeps the masked form)."""

    __tablename__ = "datasets"
    __table_args__ = (
        Index("ix_datasets_tenant_created", "tenant_id", "created_at"),
        Index("ix_datasets_status_heartbeat", "status", "heartbeat_at"),
        Index("ix_datasets_next_refresh", "next_refresh_at"),
        UniqueConstraint("tenant_id", "idempotency_key", name="uq_datasets_tenant_idempotency"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(16), default="importing")
    version: Mapped[int | None] = mapped_column(Integer, nullable=True)
    building_version: Mapped[int | None] = mapped_column(Integer, nullable=True)
    is_default: Mapped[bool] = mapped_column(Boolean, default=False)
    annotations: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    error: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    # [{"file", "path"}] (path relative to the data dir) or [{"url" (masked), "tables"}].
    sources: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    source_url: Mapped[str | None] = mapped_column(Text, nullable=True)
    import_seq: Mapped[int] = mapped_column(Integer, default=0)
    # Claims of the version being built (shared/dataset_state.py), capped like a job's.
    import_attempts: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    heartbeat_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime, nullable=True)
    deleted_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime, nullable=True)
    idempotency_key: Mapped[str | None] = mapped_column(ExactToken(200), nullable=True)
    request_hash: Mapped[str | None] = mapped_column(ExactToken(64), nullable=True)
    # "snapshot" (a DuckDB file per version) or "live" (queries run on the source).
    mode: Mapped[str] = mapped_column(String(16), default="snapshot", server_default="snapshot")
    allow_writable_role: Mapped[bool] = mapped_column(Boolean, default=False,
                                                      server_default=false())
    # What the last import found worth saying without failing (a writable role allowed).
    warnings: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)
    # The refresh schedule (shared/refresh_schedule.py) and its next slot, in UTC.
    refresh_cron: Mapped[str | None] = mapped_column(String(100), nullable=True)
    refresh_timezone: Mapped[str | None] = mapped_column(String(64), nullable=True)
    next_refresh_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime, nullable=True)
    # Row policies and column masks (engine/policies; docs/policies.md); null: none.
    policies: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON, nullable=True)
    masks: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON, nullable=True)
    # Who may ask it: {"groups": [...], "users": [external ids]}; null: the whole tenant.
    access: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)


class DatasetRefreshSlot(Base):
    """One scheduled refresh slot of a dataset, claimed by the beat's tick: the primary
    key lets each slot start its refresh exactly once, however many ticks see it due."""

    __tablename__ = "dataset_refresh_slots"

    dataset_id: Mapped[str] = mapped_column(ForeignKey("datasets.id", ondelete="CASCADE"),
                                            primary_key=True)
    slot_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, primary_key=True)
    version: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)


class DatasetVersion(Base):
    """One built, immutable version: its file is ``engine.datasets.version_path``; its
    tables' profiles (``TableProfile.as_dict``) describe it to the API and the prompt."""

    __tablename__ = "dataset_versions"

    dataset_id: Mapped[str] = mapped_column(ForeignKey("datasets.id", ondelete="CASCADE"),
                                            primary_key=True)
    version: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    tables: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    rows: Mapped[int] = mapped_column(BigInteger, default=0)
    seconds: Mapped[float] = mapped_column(Numeric(12, 3), default=0)
    # When the import finished: a snapshot job's data_as_of.
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    # {"name", "version", "dialect"} of the engine that answers this version.
    engine: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)


class Schedule(Base):
    """A report schedule (``shared/schedules/``): questions asked as a batch on a cron in
    a time zone, delivered to its targets. ``next_run_at`` is None while paused."""

    __tablename__ = "schedules"
    __table_args__ = (
        Index("ix_schedules_next_run", "next_run_at"),
        Index("ix_schedules_tenant_created", "tenant_id", "created_at"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"))
    user_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    name: Mapped[str] = mapped_column(String(200))
    # questions, dataset_id, conversation, mode, format, deliver, condition.
    spec: Mapped[dict[str, Any]] = mapped_column(JSON)
    cron: Mapped[str] = mapped_column(String(100))
    timezone: Mapped[str] = mapped_column(String(64))
    paused: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # Signs this schedule's webhook deliveries; shown to its creator once.
    secret: Mapped[str] = mapped_column(String(64))
    next_run_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)


class JobFeedback(Base):
    """A rating of one job's answer by one user (``user_key`` "tenant" for a tenant key:
    a unique key over a NULL ``user_id`` would not hold)."""

    __tablename__ = "job_feedback"
    __table_args__ = (
        UniqueConstraint("job_id", "user_key", name="uq_job_feedback_job_user"),
        Index("ix_job_feedback_dataset", "tenant_id", "dataset_id", "rating", "updated_at"),
    )

    id: Mapped[int] = mapped_column(Id, primary_key=True, autoincrement=True)
    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"))
    job_id: Mapped[str] = mapped_column(String(36))
    dataset_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    user_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    user_key: Mapped[str] = mapped_column(String(40))
    rating: Mapped[str] = mapped_column(String(8))
    comment: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)


class ScheduleRun(Base):
    """One slot of a schedule (or one run-now). The unique (schedule, slot) lets each slot
    run once, however many ticks or beats see it due."""

    __tablename__ = "schedule_runs"
    __table_args__ = (
        UniqueConstraint("schedule_id", "slot", name="uq_schedule_runs_slot"),
        Index("ix_schedule_runs_batch", "batch_id"),
        Index("ix_schedule_runs_status", "status", "created_at"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    schedule_id: Mapped[str] = mapped_column(ForeignKey("schedules.id", ondelete="CASCADE"))
    tenant_id: Mapped[int] = mapped_column(Id)
    slot: Mapped[dt.datetime] = mapped_column(UtcDateTime)
    manual: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # skipped | running | delivered | partially_delivered | failed
    status: Mapped[str] = mapped_column(String(24))
    reason: Mapped[str | None] = mapped_column(String(500), nullable=True)
    batch_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    condition_value: Mapped[float | None] = mapped_column(Float, nullable=True)
    deliveries: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    finished_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime, nullable=True)
    # Set by the delivery that is sending this run's report; a delivery left by a killed
    # worker is taken over once it is older than the lease (worker/schedules/runner.py).
    delivery_claimed_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime, nullable=True)


class VerifiedQuery(Base):
    """A question and the SQL an admin approved for it on one dataset; ``embedding`` is
    the question's MiniLM vector (384 float32, ``engine/embeddings``)."""

    __tablename__ = "verified_queries"
    __table_args__ = (Index("ix_verified_queries_dataset", "dataset_id", "created_at"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"))
    dataset_id: Mapped[str] = mapped_column(ForeignKey("datasets.id", ondelete="CASCADE"))
    question: Mapped[str] = mapped_column(Text)
    sql: Mapped[str] = mapped_column(LongText)
    embedding: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    from_job_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    created_by: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
