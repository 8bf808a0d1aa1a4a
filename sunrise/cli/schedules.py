"""``sunrise schedules add|list|runs|pause|resume|run-now``: report schedules through the
HTTP API (docs/schedules.md), with the same ``--api``/``--key``/``--tenant`` as
``sunrise datasets``. ``add`` prints the schedule id on the last line of stdout and the
webhook signing secret (shown once) on stderr."""
from __future__ import annotations

import json
from typing import Any

import click

from sunrise.cli.datasets import _Session, connection_options


def _call(api_url, api_key, tenant, method: str, path: str, body: Any = None) -> Any:
    with _Session(api_url, api_key, tenant) as client:
        return client._check(client.http.request(method, path, json=body))


@click.group("schedules")
def schedules() -> None:
    """Reports on a cron, delivered by email, Slack and webhooks."""


@schedules.command("add")
@click.option("--name", required=True)
@click.option("--cron", required=True, help="Five fields, e.g. '0 7 * * 1'.")
@click.option("--timezone", default="UTC", show_default=True, help="An IANA time zone.")
@click.option("--question", "questions", multiple=True, required=True)
@click.option("--dataset", "dataset_id", default=None)
@click.option("--format", "fmt", default="html", show_default=True,
              type=click.Choice(["html", "md", "json", "csv"]))
@click.option("--email", "emails", multiple=True, help="A recipient (repeatable).")
@click.option("--slack", "slack", multiple=True, help="A Slack incoming webhook URL.")
@click.option("--webhook", "webhooks", multiple=True, help="A webhook URL (signed POST).")
@click.option("--condition", default=None, metavar="'SQL OP VALUE'",
              help="Run only when the SQL's first cell compares true, e.g. "
                   "'SELECT count(*) FROM t > 10'.")
@click.option("--paused", is_flag=True)
@connection_options
def add(name, cron, timezone, questions, dataset_id, fmt, emails, slack, webhooks, condition,
        paused, api_url, api_key, tenant) -> None:
    """Save a schedule."""
    deliver = ([{"type": "email", "to": list(emails)}] if emails else []) + \
        [{"type": "slack", "webhook_url": u} for u in slack] + \
        [{"type": "webhook", "url": u} for u in webhooks]
    if not deliver:
        raise click.UsageError("give at least one of --email, --slack, --webhook")
    body: dict[str, Any] = {"name": name, "cron": cron, "timezone": timezone,
                            "questions": list(questions), "format": fmt, "deliver": deliver,
                            "paused": paused}
    if dataset_id:
        body["dataset_id"] = dataset_id
    if condition:
        body["condition"] = _condition(condition)
    created = _call(api_url, api_key, tenant, "POST", "/v1/schedules", body)
    click.echo(f"next run {created['next_run_at'] or '(paused)'}; webhook secret "
               f"(shown once): {created['secret']}", err=True)
    click.echo(created["schedule_id"])


def _condition(text: str) -> dict[str, Any]:
    for op in (">=", "<=", "==", "!=", ">", "<"):
        sql, found, value = text.rpartition(f" {op} ")
        if found:
            try:
                return {"sql": sql.strip(), "op": op, "value": float(value)}
            except ValueError:
                break
    raise click.BadParameter("expected 'SQL OP NUMBER', OP one of > >= < <= == !=",
                             param_hint="--condition")


@schedules.command("list")
@click.option("--json", "as_json", is_flag=True)
@connection_options
def list_schedules(as_json, api_url, api_key, tenant) -> None:
    """Your schedules: id, name, cron, zone, next run, paused, last run's status."""
    items = _call(api_url, api_key, tenant, "GET", "/v1/schedules")["schedules"]
    if as_json:
        click.echo(json.dumps(items, indent=2))
        return
    for s in items:
        last = s["last_runs"][0]["status"] if s.get("last_runs") else "-"
        state = "paused" if s["paused"] else f"next {s['next_run_at']}"
        click.echo(f"{s['schedule_id']}  {s['name']}  {s['cron']} {s['timezone']}  {state}  "
                   f"last: {last}")


@schedules.command("runs")
@click.argument("schedule_id")
@click.option("--limit", default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True)
@connection_options
def runs(schedule_id, limit, as_json, api_url, api_key, tenant) -> None:
    """A schedule's runs, newest first, with each delivery's outcome."""
    items = _call(api_url, api_key, tenant, "GET",
                  f"/v1/schedules/{schedule_id}/runs?limit={int(limit)}")["runs"]
    if as_json:
        click.echo(json.dumps(items, indent=2))
        return
    for r in items:
        deliveries = ", ".join(f"{d['type']} {d['status']} ({d['attempts']})"
                               for d in r["deliveries"]) or "-"
        click.echo(f"{r['run_id']}  {r['slot']}  {r['status']}  {deliveries}")


def _simple(command: str, method: str, path: str, body: Any, doc: str):
    @schedules.command(command, help=doc)
    @click.argument("schedule_id")
    @connection_options
    def _command(schedule_id, api_url, api_key, tenant) -> None:
        result = _call(api_url, api_key, tenant, method, path.format(schedule_id), body)
        click.echo(result.get("run_id") or result.get("next_run_at") or "paused")
    return _command


pause = _simple("pause", "PATCH", "/v1/schedules/{}", {"paused": True}, "Pause a schedule.")
resume = _simple("resume", "PATCH", "/v1/schedules/{}", {"paused": False},
                 "Resume a schedule; prints its next run.")
run_now = _simple("run-now", "POST", "/v1/schedules/{}/run", None,
                  "Run a schedule now, once; prints the run id.")
