"""``sunrise datasets add|list|describe|refresh``: a tenant's own data, through the HTTP API.

Every command talks to the API at ``--api`` (where the API and a worker on the
``datasets`` queue run; default ``SUNRISE_API_URL``). It authenticates with ``--key``
(default ``SUNRISE_API_KEY``), or, for an operator on the deployment's own machine,
with ``--tenant NAME``: a key of that tenant is minted in the app database
(``sunrise.cli.tenant_keys``) and reused. ``describe ID`` and ``refresh ID`` given
neither act as the dataset's owner, found in the app database.

``add NAME PATH...`` uploads files (streamed, never read into memory); ``add NAME URL``
snapshots a live PostgreSQL or MariaDB/MySQL database. Both then follow the import's
event stream with a progress bar and exit 1 with the problem's detail if it fails.
"""
from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console

from sunrise.cli.api_failure import api_failure
from sunrise.cli.api_options import API_OPTIONS, key_from_environment
from sunrise.cli.dataset_output import ImportProgressBar, print_dataset, print_datasets
from sunrise.client import DATASET_TERMINAL, SunriseClient

F = TypeVar("F", bound=Callable)
SETTLE_TIMEOUT_S, SETTLE_POLL_S = 3600.0, 1.0

CONNECTION_OPTIONS = (
    *API_OPTIONS,
    click.option("--tenant", default=None,
                 help="Act as this tenant with a key minted in the app database (run on the "
                      "deployment's machine; the tenant is created if new)."),
)


def connection_options(command: F) -> F:
    for option in reversed(CONNECTION_OPTIONS):
        command = option(command)
    return command


def open_client(api_url: str, api_key: str | None, tenant: str | None,
                dataset_id: str | None = None) -> SunriseClient:
    """A client of ``api_url`` with ``api_key``, or with ``tenant``'s own key, or (for a
    command about one dataset, run on the deployment's machine) with its owner's key; a
    usage error when none of these says whose data is meant, or both are given. A key
    from ``SUNRISE_API_KEY`` gives way to ``--tenant``."""
    if api_key and tenant and key_from_environment():
        api_key = None
    if api_key and tenant:
        raise click.UsageError("give --key or --tenant, not both")
    if not api_key:
        from shared.config import get_settings
        from sunrise.cli.tenant_keys import dataset_owner_name, tenant_key

        settings = get_settings()
        if tenant is None and dataset_id is not None:
            tenant = dataset_owner_name(settings, dataset_id)
        if tenant is None:
            known = "" if dataset_id is None else f" (the app database has no dataset {dataset_id})"
            raise click.UsageError(f"say whose data this is{known}: --key KEY, or --tenant NAME "
                                   "on the deployment's machine")
        api_key = tenant_key(settings, tenant)
    return SunriseClient(api_url, api_key)


class _Session:
    """One command's client; API problems and an unreachable API become clean exits."""

    def __init__(self, api_url: str, api_key: str | None, tenant: str | None,
                 dataset_id: str | None = None):
        self.api_url = api_url
        self.client = open_client(api_url, api_key, tenant, dataset_id)

    def __enter__(self) -> SunriseClient:
        return self.client

    def __exit__(self, exc_type, exc, tb) -> None:
        self.client.close()
        failure = api_failure(exc, self.api_url) if exc is not None else None
        if failure is not None:
            raise failure from exc


@click.group("datasets")
def datasets() -> None:
    """Your own data: upload files or snapshot a database, list, describe, refresh."""


@datasets.command("add")
@click.argument("name")
@click.argument("sources", nargs=-1, required=True, metavar="PATH_OR_URL...")
@click.option("--tables", default=None,
              help="With a database URL: only these tables, comma-separated schema.table.")
@click.option("--no-wait", is_flag=True, help="Return once the import is accepted.")
@connection_options
def add(name: str, sources: tuple[str, ...], tables: str | None, no_wait: bool,
        api_url: str, api_key: str | None, tenant: str | None) -> None:
    """Create dataset NAME from files (CSV/TSV, Parquet, JSON/NDJSON, .xlsx, SQLite,
    DuckDB) or from one database URL (SQLAlchemy form, e.g. postgresql://u:p@host/db)."""
    urls = [s for s in sources if "://" in s]
    if urls and len(sources) > 1:
        raise click.UsageError("a dataset comes from files or from one database URL, not both")
    if tables and not urls:
        raise click.UsageError("--tables goes with a database URL")
    paths = [Path(s) for s in sources if "://" not in s]
    for path in paths:
        if not path.is_file():
            raise click.BadParameter(f"{path} is not a file", param_hint="PATH_OR_URL")
    console = Console(stderr=True, soft_wrap=True)
    with _Session(api_url, api_key, tenant) as client:
        if urls:
            listed = [t.strip() for t in (tables or "").split(",") if t.strip()]
            accepted = client.snapshot_database(name, urls[0], listed or None)
        else:
            size = sum(p.stat().st_size for p in paths)
            console.print(f"uploading {len(paths)} file(s), {_size(size)}")
            accepted = client.create_dataset(name, paths)
        dataset_id = accepted["dataset_id"]
        console.print(f"dataset {dataset_id} accepted; importing")
        if no_wait:
            click.echo(dataset_id)
            return
        ending, dataset = follow_import(client, dataset_id, console)
    _finish(ending, dataset, console)


@datasets.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the API's JSON.")
@connection_options
def list_datasets(as_json: bool, api_url: str, api_key: str | None, tenant: str | None) -> None:
    """The tenant's datasets: id, name, status, version, tables, default."""
    with _Session(api_url, api_key, tenant) as client:
        items = client.datasets()
    if as_json:
        click.echo(json.dumps(items, indent=2, default=str))
    else:
        print_datasets(items, _stdout_console())


def _stdout_console() -> Console:
    """Rich's console for tables; piped into a file or another program (no terminal to
    measure) it gets 120 columns instead of rich's 80, so ids and states are not cut."""
    return Console() if sys.stdout.isatty() else Console(width=120)


@datasets.command("describe")
@click.argument("dataset_id")
@click.option("--json", "as_json", is_flag=True, help="Print the API's JSON.")
@connection_options
def describe(dataset_id: str, as_json: bool, api_url: str, api_key: str | None,
             tenant: str | None) -> None:
    """DATASET_ID's tables and columns: types, descriptions and profile."""
    with _Session(api_url, api_key, tenant, dataset_id) as client:
        dataset = client.dataset(dataset_id)
    if as_json:
        click.echo(json.dumps(dataset, indent=2, default=str))
    else:
        print_dataset(dataset, _stdout_console())


@datasets.command("refresh")
@click.argument("dataset_id")
@click.option("--no-wait", is_flag=True, help="Return once the re-import is accepted.")
@connection_options
def refresh(dataset_id: str, no_wait: bool, api_url: str, api_key: str | None,
            tenant: str | None) -> None:
    """Re-import DATASET_ID's sources as a new version (the current one serves meanwhile)."""
    console = Console(stderr=True, soft_wrap=True)
    with _Session(api_url, api_key, tenant, dataset_id) as client:
        before = client.dataset(dataset_id)
        accepted = client.refresh_dataset(dataset_id)
        console.print(f"dataset {dataset_id}: re-importing (version {before.get('version')} "
                      "keeps serving meanwhile)")
        if no_wait:
            click.echo(json.dumps(accepted, default=str))
            return
        ending, dataset = follow_import(client, dataset_id, console)
    _finish(ending, dataset, console)


def follow_import(client: SunriseClient, dataset_id: str,
                  console: Console) -> tuple[str | None, dict[str, Any]]:
    """Show the import's progress from its event stream until ``ready`` or ``failed``;
    returns that terminal event's name (None if the stream ended without one) and the
    dataset as ``GET /v1/datasets/{id}`` shows it afterwards."""
    ending = None
    with ImportProgressBar(console) as bar:
        for event in client.dataset_events(dataset_id):
            bar.update(event.event, event.data)
            ending = event.event if event.event in DATASET_TERMINAL else ending
    # A stream that ended early still leaves the outcome on the dataset itself.
    dataset = client.dataset(dataset_id)
    deadline = time.monotonic() + SETTLE_TIMEOUT_S
    while ending is None and dataset.get("status") == "importing" \
            and time.monotonic() < deadline:
        time.sleep(SETTLE_POLL_S)
        dataset = client.dataset(dataset_id)
    return ending, dataset


def _finish(ending: str | None, dataset: dict[str, Any], console: Console) -> None:
    """Print the outcome; exit 1 with the problem's detail when the import failed (a
    failed refresh leaves the dataset ready on its previous version, and says so)."""
    if ending == "failed" or dataset.get("status") == "failed":
        error = dataset.get("error") or {}
        kept = (f" (version {dataset['version']} still serves)"
                if dataset.get("status") == "ready" else "")
        raise click.ClickException(f"import failed{kept}: {error.get('detail') or error}")
    tables: Sequence[dict] = dataset.get("tables") or []
    rows = sum(t.get("rows") or 0 for t in tables)
    console.print(f"dataset {dataset['dataset_id']} ({dataset.get('name')}) {dataset['status']}, "
                  f"version {dataset.get('version')}: {len(tables)} table(s), {rows:,} rows")
    click.echo(dataset["dataset_id"])


def _size(n: int) -> str:
    return f"{n / 2**20:,.1f} MB" if n >= 2**20 else f"{n / 1024:,.1f} kB"
