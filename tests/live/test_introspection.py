"""Introspection: the snapshot importer's DuckDB type names, and a profile computed on the
engine from a bounded sample in profile.py's shape."""
from __future__ import annotations

import pytest

from engine.datasets import DatabaseSource, build_version
from shared.errors import MissingTables
from tests.live.conftest import ORDERS


def test_types_and_profile_match_a_snapshot_of_the_same_tables(source, engine, outbound,
                                                               tmp_path):
    built = build_version([DatabaseSource(source.reader_url, ("orders", "regions"), outbound)],
                          tmp_path, "snap", 1)
    snapshot = {t.name: t for t in built.tables}
    live = {t.name: t for t in engine.introspect(["orders", "regions"], sample_rows=10_000)}
    assert list(live) == ["orders", "regions"]
    for name in live:
        assert [(c.name, c.type) for c in live[name].columns] == \
            [(c.name, c.type) for c in snapshot[name].columns]
    assert live["regions"] == snapshot["regions"]  # small: every figure is exact in both
    assert live["orders"].rows == ORDERS
    for mine, theirs in zip(live["orders"].columns, snapshot["orders"].columns, strict=True):
        assert (mine.null_fraction, mine.min, mine.max) == \
            (theirs.null_fraction, theirs.min, theirs.max)
        if theirs.values_complete:
            assert mine.top_values == theirs.top_values


def test_the_profile_reads_a_bounded_sample(source, engine):
    (orders,) = engine.introspect(["orders"], sample_rows=500)
    ids = orders.columns[0]
    assert ids.name == "id" and ids.distinct == 500  # 500 rows looked at, no more
    assert orders.rows >= 500


def test_a_missing_table_is_named(engine):
    with pytest.raises(MissingTables) as caught:
        engine.introspect(["orders", "nope"])
    assert caught.value.extra["missing"] == ["nope"]


def test_every_table_of_the_default_schema_without_a_list(engine):
    names = [t.name for t in engine.introspect(None, sample_rows=100)]
    assert {"orders", "regions", "audit"} <= set(names) and names == sorted(names)


def test_engine_info_names_the_product_its_version_and_dialect(source, engine):
    info = engine.engine_info()
    expected = {"postgresql": ("PostgreSQL", "postgres"), "mariadb": ("MariaDB", "mysql")}
    assert (info["name"], info["dialect"]) == expected[source.kind]
    major, _, minor = info["version"].partition(".")
    assert major.isdigit() and minor[:1].isdigit(), info
    assert engine.server_version() == f"{info['name']} {info['version']}"
