"""A live version's system prompt names its engine and dialect, is byte-identical for
the same version, and leaves a snapshot's (DuckDB) prompt exactly as it was."""
from __future__ import annotations

import datetime as dt

from engine.datasets import ColumnProfile, TableProfile
from worker.agent.system_prompt import TEMPLATE, PromptEngine, build_system_prompt
from worker.datasets.prompt import build_dataset_prompt

TODAY = dt.date(2026, 12, 2)
TABLES = [TableProfile("measures", 5, (ColumnProfile("id", "INTEGER", 0.0, 5, 1, 5),
                                       ColumnProfile("region", "VARCHAR", 0.0, 4)))]
POSTGRES = {"name": "PostgreSQL", "version": "16.4", "dialect": "postgres"}


def test_a_live_prompt_names_the_engine_and_dialect_and_is_byte_stable():
    engine = PromptEngine.of(POSTGRES)
    prompt = build_dataset_prompt(TABLES, TODAY, engine=engine)
    assert "This is PostgreSQL 16.4; write PostgreSQL SQL." in prompt
    assert "Database schema (PostgreSQL 16.4):" in prompt
    assert "about the PostgreSQL database" in prompt
    assert "DuckDB SQL notes" not in prompt and "duckdb_columns" not in prompt
    assert "CREATE TABLE measures (id INTEGER, region VARCHAR);" in prompt
    assert prompt == build_dataset_prompt(list(TABLES), TODAY, engine=PromptEngine.of(dict(POSTGRES)))


def test_a_live_prompt_over_budget_looks_columns_up_in_information_schema():
    many = [TableProfile(f"t{i:03}", i, tuple(ColumnProfile(f"c{j}", "INTEGER", 0.0, 1)
                                              for j in range(40))) for i in range(200)]
    prompt = build_dataset_prompt(many, TODAY, engine=PromptEngine.of(POSTGRES),
                                  token_budget=6_000)
    assert "information_schema.columns" in prompt and "duckdb_" not in prompt


def test_a_snapshot_prompt_is_unchanged():
    assert PromptEngine.of(None) is None
    assert PromptEngine.of({"name": "DuckDB", "version": "1.1", "dialect": "duckdb"}) is None
    schema = [("measures", [("id", "INTEGER"), ("region", "VARCHAR")])]
    assert build_dataset_prompt(TABLES, TODAY) == build_system_prompt(schema, TODAY)
    assert build_system_prompt(schema, TODAY).startswith(TEMPLATE.split("{schema}")[0])
