"""Running model-written SQL on a dataset version, safely: data out, never text.

Public face: ``engine.sql.sandbox`` (``SqlSandbox``, ``sandbox_settings``) and
``engine.sql.query_result`` (``QueryResult``, what a query returns). Everything else is
the sandbox's inside: the SQL processes (``process``, ``child``), the executor that
touches DuckDB (``executor``), its statement check (``guard``), prepared plans
(``plans``), the result's rows and summary as SQL (``result_sql``, ``shape``) and the
time limit (``watchdog``). The import-linter contracts in ``pyproject.toml`` keep
outsiders to the public face; the live engines (``engine/live/``) also use
``result_sql``, so a live result's summary is computed by the same SQL.
"""
