"""``sunrise datasets ...`` and ``sunrise ask --dataset``, run as real subprocesses against
the real API (gunicorn), the real Celery worker (``datasets`` queue), MariaDB and Redis."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.utils.dataset_files import RAGGED_CSV, SALES_CSV, write_file

pytestmark = pytest.mark.slow


@pytest.fixture
def api(live_api, celery_worker):
    return live_api


@pytest.fixture
def env(base_settings, fake_llm_server, tmp_path):
    from tests.utils.live_api import settings_env

    clean = {k: v for k, v in os.environ.items()
             if not k.startswith(("SUNRISE_", "ANTHROPIC_"))}
    return {**clean, **settings_env(base_settings)}


@pytest.fixture
def tenant() -> str:
    return f"cli-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def sales_csv(tmp_path) -> Path:
    return write_file(tmp_path, "sales.csv", SALES_CSV)


def sunrise(env, *args, timeout=180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sunrise.cli.main", *args], env=env,
                          capture_output=True, text=True, timeout=timeout)


def add(env, api, tenant, name, *paths) -> subprocess.CompletedProcess:
    return sunrise(env, "datasets", "add", name, *map(str, paths), "--tenant", tenant,
                   "--api", api.base_url)


def test_add_uploads_imports_and_describes_a_csv_with_na_nulls(env, api, tenant, sales_csv):
    done = add(env, api, tenant, "sales", sales_csv)
    assert done.returncode == 0, done.stderr
    dataset_id = done.stdout.strip().splitlines()[-1]
    assert "1 table(s), 5 rows" in done.stderr and "ready" in done.stderr

    listed = sunrise(env, "datasets", "list", "--tenant", tenant, "--api", api.base_url,
                     "--json")
    assert listed.returncode == 0, listed.stderr
    (item,) = json.loads(listed.stdout)
    assert (item["dataset_id"], item["name"], item["status"], item["version"]) == \
        (dataset_id, "sales", "ready", 1)

    described = sunrise(env, "datasets", "describe", dataset_id, "--tenant", tenant,
                        "--api", api.base_url, "--json")
    assert described.returncode == 0, described.stderr
    (table,) = json.loads(described.stdout)["tables"]
    types = {c["name"]: c["type"] for c in table["columns"]}
    assert types["units"] in ("BIGINT", "INTEGER") and types["price"] == "DOUBLE"
    assert types["sold_on"] == "DATE" and types["city"] == "VARCHAR"
    units = next(c for c in table["columns"] if c["name"] == "units")
    assert units["null_fraction"] == pytest.approx(0.4)

    shown = sunrise(env, "datasets", "describe", dataset_id, "--tenant", tenant,
                    "--api", api.base_url)
    assert shown.returncode == 0, shown.stderr
    for text in ("sales", "units", "BIGINT", "40.0%", "Oslo"):
        assert text in shown.stdout


def test_a_failed_import_exits_1_with_the_line_it_failed_on(env, api, tenant, tmp_path):
    ragged = write_file(tmp_path, "ragged.csv", RAGGED_CSV)
    done = add(env, api, tenant, "ragged", ragged)
    assert done.returncode == 1
    assert "import failed" in done.stderr and "line 4" in done.stderr


def test_another_tenant_gets_404_and_nothing_listed(env, api, tenant, sales_csv):
    dataset_id = add(env, api, tenant, "sales", sales_csv).stdout.strip().splitlines()[-1]
    other = f"{tenant}-other"
    done = sunrise(env, "datasets", "describe", dataset_id, "--tenant", other,
                   "--api", api.base_url)
    assert done.returncode == 1 and "404" in done.stderr
    listed = sunrise(env, "datasets", "list", "--tenant", other, "--api", api.base_url, "--json")
    assert json.loads(listed.stdout) == []


def test_refresh_makes_version_2_as_the_datasets_owner(env, api, tenant, sales_csv):
    dataset_id = add(env, api, tenant, "sales", sales_csv).stdout.strip().splitlines()[-1]
    # On the deployment's machine, a command about one dataset acts as its owner.
    done = sunrise(env, "datasets", "refresh", dataset_id, "--api", api.base_url)
    assert done.returncode == 0, done.stderr
    assert "version 2" in done.stderr
    described = sunrise(env, "datasets", "describe", dataset_id, "--api", api.base_url, "--json")
    assert json.loads(described.stdout)["version"] == 2


def test_commands_say_whose_data_is_meant(env, api, sales_csv):
    done = sunrise(env, "datasets", "add", "sales", str(sales_csv), "--api", api.base_url)
    assert done.returncode == 2 and "--tenant" in done.stderr


def test_ask_answers_about_the_dataset_with_a_chart_bound_to_its_rows(env, api, tenant,
                                                                       sales_csv):
    dataset_id = add(env, api, tenant, "sales", sales_csv).stdout.strip().splitlines()[-1]
    done = sunrise(env, "ask", "What is the total units per channel?", "--dataset", dataset_id,
                   "--json")
    assert done.returncode == 0, done.stderr
    job = json.loads(done.stdout)
    assert (job["dataset_id"], job["dataset_version"]) == (dataset_id, 1)
    (chart,) = job["result"]["charts"]
    totals = {row["channel"]: next(v for k, v in row.items() if k != "channel")
              for row in chart["data"]}
    assert totals == {"web": 15, "store": 7}


def test_eval_asks_the_dataset_and_checks_gold_sql_on_it(env, api, tenant, sales_csv, tmp_path,
                                                        base_settings):
    from shared.db import session_scope
    from shared.keys import create_key

    dataset_id = add(env, api, tenant, "sales", sales_csv).stdout.strip().splitlines()[-1]
    gold = write_file(tmp_path, "gold.yaml", """title: Sales
questions:
  - id: sales-per-city
    question: How many sales are there per city?
    sql: SELECT city, count(*) FROM sales GROUP BY 1
""")
    with session_scope(base_settings.database_url) as s:
        key = create_key(s, tenant)
    out = tmp_path / "eval.html"
    done = sunrise(env, "eval", str(gold), "--api", api.base_url, "--key", key,
                   "--dataset", dataset_id, "-o", str(out))
    assert done.returncode == 0, done.stderr
    report = json.loads(out.with_suffix(".json").read_text())
    assert report["summary"]["execution_correct"] == 1, report["questions"]


def test_add_snapshots_the_listed_tables_of_a_postgresql_database(env, api, tenant):
    from tests.utils.postgres import create_database, drop_database, run_sql

    name = f"sunrise_cli_{uuid.uuid4().hex[:8]}"
    url = create_database(name).replace("postgres@", "postgres:unused-secret@")
    try:
        run_sql("CREATE TABLE shops (id int PRIMARY KEY, city text, revenue numeric(10, 2))",
                "INSERT INTO shops VALUES (1, 'Oslo', 10.50), (2, 'Bergen', NULL)",
                "CREATE TABLE staff (id int)", dbname=name)
        done = sunrise(env, "datasets", "add", "shops", url, "--tables", "public.shops",
                       "--tenant", tenant, "--api", api.base_url)
        assert done.returncode == 0, done.stderr
        assert "unused-secret" not in done.stderr + done.stdout
        dataset_id = done.stdout.strip().splitlines()[-1]
        described = sunrise(env, "datasets", "describe", dataset_id, "--tenant", tenant,
                            "--api", api.base_url, "--json")
        (table,) = json.loads(described.stdout)["tables"]
        assert (table["name"], table["rows"]) == ("shops", 2)
        assert {c["name"]: c["type"] for c in table["columns"]}["revenue"] == "DECIMAL(10,2)"
    finally:
        drop_database(name)
