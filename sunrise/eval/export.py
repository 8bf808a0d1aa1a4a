"""``sunrise eval export --dataset ID -o gold.yaml``: a team's own gold file, from the
verified queries of a dataset (and, with ``--include-upvoted``, the queries of answers
people rated up), in the format ``sunrise eval`` reads (``sunrise/eval/gold.py``)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import httpx
import yaml

from sunrise.cli.api_failure import api_failure
from sunrise.cli.api_options import api_options
from sunrise.client import ApiError, NotSunriseApi, SunriseClient
from sunrise.eval.gold import GoldSet


def gold_items(verified: list[dict[str, Any]], upvoted: list[dict[str, Any]]) -> list[dict]:
    """Gold items: each verified query, then each up-voted answer's query whose question
    is not already there (the verified one wins); answers without SQL are skipped."""
    items, seen = [], set()
    for vq in verified:
        items.append({"id": f"verified-{vq['verified_query_id']}", "tier": "verified",
                      "question": vq["question"], "sql": vq["sql"]})
        seen.add(vq["question"].strip().lower())
    for rated in upvoted:
        question = (rated.get("question") or "").strip()
        if not rated.get("sql") or not question or question.lower() in seen:
            continue
        seen.add(question.lower())
        items.append({"id": f"upvoted-{rated['job_id']}", "tier": "upvoted",
                      "question": question, "sql": rated["sql"]})
    return items


@click.command("export")
@click.option("--dataset", "dataset_id", required=True, help="The dataset whose queries to export.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The gold file to write (YAML).")
@click.option("--include-upvoted", is_flag=True, help="Add the queries of up-voted answers.")
@api_options
def export_command(dataset_id: str, output: Path, include_upvoted: bool, api_url: str,
                   api_key: str | None) -> None:
    """Write a dataset's verified queries as a gold file for ``sunrise eval``."""
    try:
        with SunriseClient(api_url, api_key) as client:
            verified = client.verified_queries(dataset_id)
            upvoted = client.feedback(dataset_id, rating="up") if include_upvoted else []
    except (httpx.HTTPError, ApiError, NotSunriseApi) as exc:
        raise api_failure(exc, api_url) from exc
    items = gold_items(verified, upvoted)
    if not items:
        raise click.ClickException(f"Dataset {dataset_id} has no verified queries"
                                   + (" or up-voted answers" if include_upvoted else "")
                                   + " to export.")
    document = {"title": f"Verified queries of dataset {dataset_id}", "questions": items}
    GoldSet.model_validate(document)  # what sunrise eval will read back
    output.write_text("# Written by sunrise eval export; run it with\n"
                      f"#   sunrise eval {output.name} --dataset {dataset_id}\n"
                      + yaml.safe_dump(document, sort_keys=False, allow_unicode=True),
                      encoding="utf-8")
    click.echo(f"{len(items)} gold questions written to {output}", err=True)
