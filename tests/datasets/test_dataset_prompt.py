"""The per-dataset-version system prompt: today's prompt plus what the dataset adds,
byte-stable, within its token budget, and always pointing the model at the one tool."""
from __future__ import annotations

import datetime as dt
import random
import re
import shutil

import duckdb
import pytest

from engine.datasets import (
    Annotations,
    ColumnProfile,
    TableProfile,
    TopValue,
    check_annotations,
    describe_tables,
    profile_tables,
)
from engine.sql.sandbox import SqlSandbox
from shared.errors import ValidationFailed
from sunrise.fake_llm.schema_prompt import parse_schema
from worker.agent.system_prompt import build_system_prompt
from worker.datasets.prompt import LOOKUP, build_dataset_prompt
from worker.jobs.history import estimate_tokens

TODAY = dt.date(2026, 3, 7)
CARRIERS = ["9E", "AA", "AS", "B6", "DL", "EV", "F9", "FL", "HA", "MQ", "OO", "UA", "US", "VX",
            "WN", "YV"]


@pytest.fixture(scope="module")
def sample(sample_duckdb, tmp_path_factory):
    """The built-in sample's profile and its file (a private copy: see tests/conftest.py)."""
    copy = tmp_path_factory.mktemp("sample") / "sample.duckdb"
    shutil.copyfile(sample_duckdb, copy)
    con = duckdb.connect(str(copy), read_only=True)
    try:
        return profile_tables(con), copy
    finally:
        con.close()


def _without_notes(prompt: str) -> str:
    return re.sub(r"\n\nNotes on tables and columns:\n.*?(?=\n\nToday's date:)", "", prompt,
                  flags=re.DOTALL)


def test_the_sample_gets_todays_prompt_plus_value_hints(sample):
    tables, path = sample
    sandbox = SqlSandbox(path)
    try:
        today = build_system_prompt(sandbox.describe_schema(), TODAY)
    finally:
        sandbox.close()
    prompt = build_dataset_prompt(tables, TODAY)
    assert _without_notes(prompt) == today
    line = next(li for li in prompt.splitlines() if li.startswith("  - carrier:"))
    assert sorted(re.findall(r"'(\w\w)'", line)) == CARRIERS
    assert "  - origin: values 'EWR', 'JFK', 'LGA'" in prompt  # by count: EWR flew the most
    assert parse_schema(prompt).tables == parse_schema(today).tables  # the offline model's view


def test_without_annotations_or_hints_it_is_exactly_todays_prompt(sample):
    tables, _ = sample
    bare = [TableProfile(t.name, t.rows, tuple(ColumnProfile(c.name, c.type, 0.0, 0)
                                               for c in t.columns)) for t in tables]
    schema = [(t.name, [(c.name, c.type) for c in t.columns]) for t in tables]
    assert build_dataset_prompt(bare, TODAY) == build_system_prompt(schema, TODAY)


def _annotations(order: int = 1) -> Annotations:
    glossary = {"on time": "arrived no more than 15 minutes late",
                "Carrier": "the airline", "block time": "gate to gate"}
    items = list(glossary.items())[::order]
    return Annotations(
        description="NYC   departures\nin 2013.",
        tables={"flights": {"description": "One row per departure.",
                            "columns": {"dep_delay": "Minutes late; negative is early."}},
                "airlines": {"description": "Carrier codes and names."}},
        glossary=dict(items),
        examples=[{"question": "Which carrier flew most?",
                   "sql": "SELECT carrier, count(*) AS n\nFROM flights\nGROUP BY 1\nORDER BY n DESC"}])


def test_annotations_are_rendered_after_the_schema_in_a_stable_order(sample):
    tables, _ = sample
    prompt = build_dataset_prompt(tables, TODAY, _annotations())
    notes = prompt[prompt.index("About this database:"):prompt.index("Today's date:")]
    assert notes.startswith("About this database: NYC departures in 2013.\n\n")
    assert "- flights (336,776 rows): One row per departure.\n" in notes
    assert "  - dep_delay: Minutes late; negative is early.\n" in notes
    assert "- airlines (16 rows): Carrier codes and names.\n  - carrier: values '" in notes
    glossary = notes[notes.index("Glossary:"):].splitlines()[1:4]
    assert glossary == ["- block time: gate to gate", "- Carrier: the airline",
                        "- on time: arrived no more than 15 minutes late"]
    assert ("- Question: Which carrier flew most?\n  SQL: SELECT carrier, count(*) AS n\n"
            "       FROM flights\n") in notes


def test_identical_inputs_give_identical_bytes(sample):
    tables, _ = sample
    shuffled = list(tables)
    random.Random(7).shuffle(shuffled)
    first = build_dataset_prompt(tables, TODAY, _annotations(1))
    again = build_dataset_prompt(shuffled, TODAY, _annotations(-1))
    assert first.encode() == again.encode()
    assert re.findall(r"\d{4}-\d{2}-\d{2}[T ]\d", first) == []  # a date, never a time
    assert build_dataset_prompt(tables, TODAY + dt.timedelta(days=1), _annotations()) != first


def _many_tables(count: int) -> list[TableProfile]:
    kinds = [ColumnProfile(f"code_{i}", "VARCHAR", 0.0, 3,
                           top_values=(TopValue("a", 5), TopValue("b", 3), TopValue("c", 1)))
             for i in range(3)]
    columns = tuple(kinds) + tuple(ColumnProfile(f"measure_{i}", "DOUBLE", 0.1, 900)
                                   for i in range(9))
    return [TableProfile(f"table_{n:04d}", 1000 * n, columns) for n in range(count)]


def test_over_budget_the_hints_go_first(sample):
    tables, _ = sample
    full = build_dataset_prompt(tables, TODAY)
    plain = build_dataset_prompt(tables, TODAY, token_budget=estimate_tokens(full) - 1)
    assert "values 'UA'" not in plain and "CREATE TABLE flights (" in plain
    assert estimate_tokens(plain) < estimate_tokens(full)


def test_a_schema_too_big_lists_tables_and_says_how_to_look_columns_up():
    annotations = Annotations(tables={"table_0007": {"description": "Seven.",
                                                     "columns": {"measure_1": "Kilograms."}}},
                              glossary={"kg": "kilogram"})
    prompt = build_dataset_prompt(_many_tables(500), TODAY, annotations, token_budget=16_000)
    assert estimate_tokens(prompt) <= 16_000
    assert "CREATE TABLE" not in prompt and "This database has 500 tables" in prompt
    assert "duckdb_columns()" in prompt and "execute_sql" in prompt
    assert "- table_0007: 7,000 rows. Seven.\n" in prompt and "- table_0499: 499,000 rows." in prompt
    assert "  - measure_1: Kilograms." in prompt and "- kg: kilogram" in prompt


def test_long_table_descriptions_are_cut_before_tables_are_left_out():
    long = "Orders as the shop system keeps them, one row per line item, " * 4
    annotations = Annotations(tables={t.name: {"description": long} for t in _many_tables(500)})
    prompt = build_dataset_prompt(_many_tables(500), TODAY, annotations, token_budget=16_000)
    listed = re.findall(r"^- table_\d{4}: [\d,]+ rows\. (.*)$", prompt, flags=re.MULTILINE)
    assert len(listed) == 500 and len(set(listed)) == 1
    assert listed[0].endswith("...") and len(listed[0]) < len(long.strip())
    assert estimate_tokens(prompt) <= 16_000


def test_when_even_the_table_list_is_too_big_it_is_cut_and_says_so():
    prompt = build_dataset_prompt(_many_tables(5000), TODAY, token_budget=16_000)
    assert estimate_tokens(prompt) <= 16_000
    shown = re.findall(r"^- table_\d{4}:", prompt, flags=re.MULTILINE)
    more = re.search(r"\.\.\. and ([\d,]+) more tables", prompt)
    assert shown and more and len(shown) + int(more.group(1).replace(",", "")) == 5000
    assert shown[0] == "- table_0000:"  # the same prefix every time


def test_the_lookup_query_the_prompt_suggests_runs_in_the_sandbox(write, build):
    built = build(write("orders.csv", "id,amount\n1,2\n"), write("users.csv", "id,name\n1,a\n"))
    suggested = next(line for line in LOOKUP.splitlines() if line.startswith("SELECT"))
    sql = suggested.replace("'<table>', '<table>'", "'orders', 'users'")
    sandbox = SqlSandbox(built.path)
    try:
        result = sandbox.run(sql)
    finally:
        sandbox.close()
    assert not result.is_error, result.error
    assert result.rows == [("orders", "id", "BIGINT"), ("orders", "amount", "BIGINT"),
                           ("users", "id", "BIGINT"), ("users", "name", "VARCHAR")]


def test_unknown_tables_and_columns_in_annotations_are_named(sample):
    tables, _ = sample
    check_annotations(_annotations(), tables)
    wrong = Annotations(tables={"flight": {}, "flights": {"columns": {"delay": "x", "dep_delay": "y"}}})
    with pytest.raises(ValidationFailed) as caught:
        check_annotations(wrong, tables)
    assert caught.value.extra["unknown"] == ["table 'flight'", "column flights.'delay'"]


def test_describe_tables_has_the_api_shape(sample):
    tables, _ = sample
    described = describe_tables(tables, _annotations())
    flights = next(t for t in described if t["name"] == "flights")
    assert flights["rows"] == 336_776 and flights["description"] == "One row per departure."
    delay = next(c for c in flights["columns"] if c["name"] == "dep_delay")
    assert delay["description"] == "Minutes late; negative is early." and delay["type"] == "DOUBLE"
    assert set(delay) == {"name", "type", "description", "null_fraction", "distinct", "min", "max",
                          "top_values", "original", "format", "suggestion"}
