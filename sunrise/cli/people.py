"""``sunrise users`` and ``sunrise audit``: a tenant's people and its audit log, from
the operator's shell (no API key needed: it reads the database as ``keys`` does)."""
from __future__ import annotations

import json

import click

from shared.principal import ROLES


def _tenant(s, name: str):
    from shared.people import tenant_by_name

    tenant = tenant_by_name(s, name)
    if tenant is None:
        raise click.ClickException(f"no tenant named {name!r}")
    return tenant


def _database_url() -> str:
    from shared.config import get_settings

    return get_settings().database_url


def _changed(tenant_id: int) -> None:
    """Make API processes read the tenant's users again from their next request."""
    from shared.access_generation import bump
    from shared.config import get_settings
    from shared.redis_client import redis_for

    bump(redis_for(get_settings().redis_url), tenant_id)


@click.group()
def users() -> None:
    """A tenant's users: create them and give them a sign-in link."""


@users.command("create")
@click.option("--tenant", required=True, help="Tenant name (created if new).")
@click.option("--email", required=True, help="The person's email (their external id too, "
              "unless --external-id).")
@click.option("--role", type=click.Choice(ROLES), default="viewer", show_default=True)
@click.option("--external-id", default=None, help="Your app's id for them.")
@click.option("--group", "groups", multiple=True, help="A group (repeat for several).")
@click.option("--url", default="http://127.0.0.1:8000", show_default=True,
              help="Where people reach this deployment's API.")
def users_create(tenant: str, email: str, role: str, external_id: str | None,
                 groups: tuple[str, ...], url: str) -> None:
    """Create (or update) a user and print a one-time sign-in link (valid a day) on the
    last line."""
    from shared.audit import record
    from shared.db import session_scope
    from shared.errors import ValidationFailed
    from shared.keys import get_or_create_tenant
    from shared.people import create_sign_in_link, upsert_user

    with session_scope(_database_url()) as s:
        owner = get_or_create_tenant(s, tenant)
        try:
            user = upsert_user(s, owner.id, external_id=external_id or email.lower(),
                               email=email, role=role, groups=groups)
        except ValidationFailed as exc:
            raise click.ClickException(exc.detail) from None
        record(s, owner.id, "user.create", actor="cli", target=str(user.id),
               details={"external_id": user.external_id, "email": user.email, "role": role})
        token = create_sign_in_link(s, user)
    _changed(owner.id)
    click.echo(f"user {user.external_id!r} ({role}) of tenant {tenant!r}; their sign-in "
               "link, shown once, works once within a day:")
    click.echo(f"{url.rstrip('/')}/v1/sign-in/{token}")


@click.group()
def audit() -> None:
    """The append-only audit log."""


@audit.command("export")
@click.option("--tenant", required=True, help="Tenant name.")
@click.option("--from", "since", type=click.DateTime(), default=None,
              help="From this UTC time (inclusive).")
@click.option("--to", "until", type=click.DateTime(), default=None,
              help="Up to this UTC time (exclusive).")
@click.option("-o", "--output", type=click.File("w"), default="-", show_default=True,
              help="JSON Lines file.")
def audit_export(tenant: str, since, until, output) -> None:
    """Write the tenant's audit entries, one JSON object a line, in the order written."""
    from shared.audit import export
    from shared.db import session_scope

    count = 0
    with session_scope(_database_url()) as s:
        for entry in export(s, _tenant(s, tenant).id, since=since, until=until):
            output.write(json.dumps(entry) + "\n")
            count += 1
    click.echo(f"{count} entries exported", err=True)
