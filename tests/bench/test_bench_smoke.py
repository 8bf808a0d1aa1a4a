"""Every bench at smoke size, so the benchmarks never rot, and `make bench`'s report.

Speed is not asserted (machines are shared; figures belong in BENCHMARKS.md): these
tests check that each bench runs its real processes end to end, measures both sides
of its ratio, and that its jobs were really answered. The scaling bench has its own
smoke test in tests/ops. Each bench brings its own MariaDB database, Redis number
and processes (bench/stack.py) and stops exactly those.
"""
from __future__ import annotations

import pytest

from bench import report, run_all

pytestmark = pytest.mark.slow

ROW_KEYS = {"figure", "measure", "value", "baseline", "ratio", "target", "pass"}


def _check_shape(outcome: dict, name: str) -> None:
    assert outcome["name"] == name and outcome["smoke"] is True
    assert outcome["rows"], outcome
    for r in outcome["rows"]:
        assert set(r) == ROW_KEYS, r
        assert r["value"] and r["pass"] in (True, False, None)


def test_engine_overhead_measures_both_rates():
    from bench import engine_overhead

    outcome = engine_overhead.run(smoke=True)
    _check_shape(outcome, "engine_overhead")
    details = outcome["details"]
    assert details["rounds"]["jobs_per_s"][0] > 0 and details["rounds"]["noop_tasks_per_s"][0] > 0
    # Warm-up and measured jobs alike were really answered.
    assert details["job_statuses"] == {"succeeded": details["jobs"] + 4}
    assert outcome["rows"][0]["ratio"] > 0
    assert details["cpu_ms_per_job"]["worker"] > 0
    worker_cpu, every_process, floor, at_the_floors = outcome["rows"][1:]
    assert worker_cpu["measure"].startswith("worker CPU per job") and worker_cpu["target"]
    assert "mariadb" in every_process["value"] and "redis" in every_process["value"]
    # The libraries' floor: every kind of call measured, and below what the worker spent.
    assert set(details["floor_ms_per_call"]) == {*details["floor_calls_per_job"],
                                                 "celery task (no-op worker)"}
    assert all(ms > 0 for ms in details["floor_ms_per_call"].values())
    assert 0 < details["floor_ms_per_job"] < details["cpu_ms_per_job"]["worker"]
    assert floor["ratio"] > 1 and "floor" in floor["value"]
    # At the floors the stack could only be faster than it was: an upper bound.
    assert details["api_floor_ms_per_submit"] > 0
    assert details["jobs_per_s_at_the_floors"] > max(details["rounds"]["jobs_per_s"])
    assert at_the_floors["ratio"] > outcome["rows"][0]["ratio"]


def test_conversations_per_worker_reports_ratio_and_memory():
    from bench import conversations_per_worker

    outcome = conversations_per_worker.run(smoke=True)
    _check_shape(outcome, "conversations_per_worker")
    (figures,) = outcome["details"]["runs"].values()
    assert figures["elapsed_s"] > 0 and 0 < figures["peak_rss_mb"] < 4000
    ratio, memory, cpu, floor, ratio_at_floor = outcome["rows"]
    assert 0 < ratio["ratio"] <= 1.05  # nobody beats the latency bound
    assert memory["value"].endswith("MB")
    assert cpu["value"].startswith("worker ") and figures["cpu_ms_per_job"]["worker"] > 0
    # The libraries' floor at the same concurrency: every kind of call measured, both
    # ways of reading the model, and below what the worker spent per job.
    measured = outcome["details"]["floor"]
    for how in ("process", "thread"):
        assert set(measured[how]) == set(measured["calls_per_job"]), measured
        assert all(ms > 0 for ms in measured[how].values()), measured
    assert set(measured["model ways"]) == {"raw", "messages.stream"}
    cheapest = measured["model ways"][measured["model floor way"]]["process"]
    assert cheapest == min(way["process"] for way in measured["model ways"].values())
    assert measured["process"]["model call"] == cheapest
    assert measured["celery task (no-op worker)"] > 0
    floor_ms = measured["ms_per_job"]["process"]
    assert 0 < floor_ms < figures["cpu_ms_per_job"]["worker"]
    assert floor["ratio"] > 1 and "floor" in floor["value"]
    # At the floor the figure can only do better than the worker, never beat the bound.
    assert ratio["ratio"] * 0.5 < ratio_at_floor["ratio"] <= 1


def test_api_submit_measures_rate_and_latency():
    from bench import api_submit

    outcome = api_submit.run(smoke=True)
    _check_shape(outcome, "api_submit")
    rate, latency, api_cpu, _, floor_rate, floor_cpu, contract_rate, contract_cpu = outcome["rows"]
    assert rate["ratio"] > 0
    # Measured, both sides. (Which is faster is the bench's finding, not this smoke
    # run's: a one-second run on a busy host once saw the bare framework slower.)
    assert floor_rate["ratio"] > 0 and outcome["details"]["floor_cpu_ms_per_request"]["api"] > 0
    assert floor_cpu["ratio"] > 0 and "floor" in floor_cpu["value"]
    # The contract floor does what a submit must, bare: measured, and both sides counted.
    contract = outcome["details"]["contract_floor_cpu_ms_per_request"]
    # (MariaDB's CPU is read in clock ticks: a smoke run's second may show none.)
    assert contract["api"] > 0 and "mariadb" in contract and contract_rate["ratio"] > 0
    assert contract_cpu["ratio"] > 0 and "floor" in contract_cpu["value"]
    assert api_cpu["measure"] == "api CPU per submit" and api_cpu["target"] == "≤ 2.5 ms"
    assert "/" in latency["value"] and outcome["details"]["latency_samples"] > 0


def test_completion_notify_measures_both_paths():
    from bench import completion_notify

    outcome = completion_notify.run(smoke=True)
    assert outcome["rows"] and outcome["details"]["figures"]
    assert outcome["details"]["cpu_ms_per_job"]["worker"] > 0
    # The clock starts at the worker's commit, which comes after the job's finished_at
    # is stamped: each client's delay from the commit is the shorter.
    ours, early = outcome["details"]["figures"], outcome["details"]["from_finished_at"]
    assert set(early) == set(ours) == {f"{kind}_{p}_ms" for kind in ("sse", "long_poll")
                                       for p in ("p50", "p99")}
    assert all(0 < ours[name] < early[name] for name in ours)
    # The floor in the same run: both kinds of client heard the end.
    floor = outcome["details"]["floor"]["figures"]
    assert set(floor) == set(ours) and all(ms > 0 for ms in floor.values())
    floor_rows = [r for r in outcome["rows"] if r["measure"].startswith("the floor")]
    assert len(floor_rows) == 2 and all(r["ratio"] > 0 for r in floor_rows)


def test_token_efficiency_ablation_orders_the_savings():
    from bench import token_efficiency

    outcome = token_efficiency.run(smoke=True)
    _check_shape(outcome, "token_efficiency")
    configs = outcome["details"]["configurations"]
    assert len(configs) == 5 and outcome["details"]["questions"] == 3
    outputs = {c["output_per_question"] for c in configs.values()}
    assert len(outputs) == 1, "the scripted model must answer the same in every configuration"
    naive = configs[token_efficiency.NAIVE]
    assert naive["cache_write_per_question"] == naive["cache_read_per_question"] == 0
    shipped = configs[token_efficiency.SHIPPED]
    assert shipped["billed_input_per_question"] < naive["billed_input_per_question"]


def test_large_results_both_ways_agree():
    from bench import large_results

    outcome = large_results.run(smoke=True)
    _check_shape(outcome, "large_results")
    details = outcome["details"]
    assert details["sandbox"]["rows"] == details["python"]["rows"] == 20_000
    assert details["sandbox"]["text_chars"] == details["python"]["text_chars"]


def test_faithfulness_measures_both_rates_on_real_results():
    from bench import faithfulness

    outcome = faithfulness.run(smoke=True)
    _check_shape(outcome, "faithfulness")
    false_positives, detection, timing = outcome["rows"]
    details = outcome["details"]
    assert details["answers"] == 10 and details["altered"] > 30
    assert 0 <= false_positives["ratio"] <= 1 and 0 < detection["ratio"] <= 1
    assert sum(b["altered"] for b in details["detection_by_change"].values()) == details["altered"]
    assert "µs" in timing["value"]
    assert "| change | altered | detected | rate |" in faithfulness.markdown(outcome)


def test_faithfulness_corpus_alters_exactly_one_figure():
    from bench.faithfulness_corpus import Fig, render

    parts = ["UA flew ", Fig(58665, ("int", "k1")), " flights, ", Fig(0.174, ("pct1",)), "."]
    assert render(parts, 0) == ("UA flew 58,665 flights, 17.4%.", [(8, 14), (24, 29)])
    assert render(parts, 1)[0] == "UA flew 58.7k flights, 17.4%."
    assert render(parts, 0, (1, 1.1))[0] == "UA flew 58,665 flights, 19.1%."


def test_dataset_import_measures_both_readers_upload_memory_and_three_prompt_sizes():
    from bench import dataset_import

    outcome = dataset_import.run(smoke=True)
    _check_shape(outcome, "dataset_import")
    speed, cpu, api_memory, worker_memory, held_memory, *prompts = outcome["rows"]
    assert speed["ratio"] > 0 and cpu["ratio"] > 0
    # Both files went up through the HTTP API and were imported whole, each process
    # group sampled while that ran.
    runs = outcome["details"]["upload_memory"]["runs"]
    assert [r["rows"] for r in runs] == [*dataset_import.SMOKE_UPLOAD_ROWS,
                                         dataset_import.SMOKE_UPLOAD_ROWS[-1]]
    assert all(r["api_peak_mb"] >= r["api_idle_mb"] > 0 for r in runs)
    assert all(r["worker_peak_mb"] >= r["worker_idle_mb"] > 0 for r in runs)
    assert "API peak memory" in api_memory["measure"] and api_memory["pass"] is not None
    assert "worker peak memory" in worker_memory["measure"]
    assert "SUNRISE_IMPORT_MEMORY_LIMIT" in held_memory["measure"]
    assert len(prompts) == len(dataset_import.TABLE_COUNTS)
    details = outcome["details"]
    assert details["csv_rows"] == dataset_import.SMOKE_ROWS
    # The engine reads the NA column as numbers; DuckDB's defaults would make it text.
    assert details["column_types"]["engine"]["quantity"] == "BIGINT"
    assert details["column_types"]["duckdb_defaults"]["quantity"] == "VARCHAR"
    sizes = [details["prompts"][count]["tokens"] for count in dataset_import.TABLE_COUNTS]
    assert sizes[0] < sizes[1] and all(p["pass"] for p in prompts)
    assert "columns looked up" in prompts[-1]["measure"]
    assert "quantity" in dataset_import.markdown(outcome)
    assert "| file | import memory limit | rows |" in dataset_import.markdown(outcome)


def test_queue_response_sees_the_step_and_the_scaling_rule_acts():
    from bench import queue_response

    outcome = queue_response.run(smoke=True)
    _check_shape(outcome, "queue_response")
    plan, rounds = outcome["details"]["plan"], outcome["details"]["rounds"]
    assert [r["label"] for r in rounds] == ["1 worker", "autoscaled"]
    for r in rounds:
        assert r["lost"] == r["not_first_attempt"] == 0, r
        assert all(r["jobs"][phase] > 0 for phase in ("steady", "step", "settle")), r["jobs"]
        assert set(r["timeline"]["phase"]) == {"s", "S", "·"}
    alone, scaled = rounds
    # 1.5x a worker's latency bound cannot all be served: a backlog builds and ages, and
    # jobs in flight sit at the thread count (what the in-flight trigger sees).
    assert alone["max_depth"] > 0 and alone["max_age"] > 0 and alone["backlog_slope"] > 0
    assert alone["in_flight_at_saturation"] == plan["threads"]
    # The manifests' rule asked for a second worker, which started and took jobs.
    assert scaled["max_workers"] == 2 and scaled["scale_events"]
    assert scaled["worker_ready_s"][0] is not None and scaled["worker_ready_s"][0] > 0
    assert outcome["rows"][-1]["pass"] is True
    assert queue_response.markdown(outcome).count("| autoscaled |") == 1


def test_scaling_rule_is_the_manifests_and_acts_like_the_hpa():
    from bench.queue_response import desired_workers, scaling_rule

    rule = scaling_rule()
    assert rule == {"in_flight": 0.75, "backlog": 1.0}
    assert desired_workers({"unacked": 0, "depth": 0}, 64, rule) == 1
    assert desired_workers({"unacked": 48, "depth": 0}, 64, rule) == 1
    assert desired_workers({"unacked": 49, "depth": 0}, 64, rule) == 2
    assert desired_workers({"unacked": 128, "depth": 1000}, 64, rule) == 16


def test_run_all_writes_the_report_and_keeps_hand_written_sections(tmp_path):
    target = tmp_path / "BENCHMARKS.md"
    target.write_text("# Notes written by hand\n\nKeep me.\n")
    args = ["--smoke", "--only", "token_efficiency", "--output", str(target),
            "--raw", str(tmp_path / "raw.json")]
    assert run_all.main(args) == 0
    first = target.read_text()
    assert first.startswith(report.BEGIN) and "Keep me." in first
    assert "| 5 token efficiency |" in first and "## How to reproduce" in first
    assert "commit `" in first
    run_all.main(args)
    second = target.read_text()
    assert second.count(report.BEGIN) == 1 and second.count("Keep me.") == 1
    target.write_text(second.replace("| 5 token efficiency |", "| edited |"))
    assert run_all.main([*args, "--render-only"]) == 0  # from the raw results alone
    assert target.read_text() == second


def test_a_failing_bench_is_reported_not_raised(monkeypatch):
    import bench.large_results as module

    def broken(smoke: bool = False, profile: bool = False) -> dict:
        raise RuntimeError("boom")

    monkeypatch.setattr(module, "run", broken)
    outcome = run_all.run_bench("large_results", smoke=True, profile=False)
    assert "RuntimeError: boom" in outcome["error"]
    text = report.render([outcome], report.machine(), report.machine(),
                         __import__("datetime").datetime.now(), smoke=True)
    assert "the bench failed" in text


@pytest.mark.parametrize("name", run_all.BENCHES)
def test_every_bench_module_exposes_run(name):
    import importlib
    import inspect

    module = importlib.import_module(f"bench.{name}")
    assert next(iter(inspect.signature(module.run).parameters)) == "smoke"


def test_naive_configuration_knobs_render_the_same_result_differently():
    """The settings the token bench switches (tool_result_format / _max_rows) render a
    result differently; the shipped values give the shipped text."""
    from engine.sql.query_result import ColumnSummary, QueryResult
    from engine.sql.result_text import format_result, result_text

    rows = [(f"c{i}", i) for i in range(30)]
    summary = [ColumnSummary("n", 30, 435, 0, 29, 14.5)]
    text = format_result(1, ["carrier", "n"], rows, 30, summary)
    result = QueryResult("SELECT ...", ["carrier", "n"], rows, 30, False, None, 1.0,
                         ["VARCHAR", "BIGINT"], summary)
    assert result_text(result, 1) == text
    every_csv = result_text(result, 1, "csv", 0)
    assert every_csv.startswith("query_id=1 rows=30 shown=30") and "summary" not in every_csv
    every_json = __import__("json").loads(result_text(result, 1, "json", 0))
    assert len(every_json["data"]) == 30 and "summary" not in every_json
    cut_json = __import__("json").loads(result_text(result, 1, "json", 25))
    assert len(cut_json["data"]) == 25 and cut_json["summary"][0]["total"] == 435


def test_cli_startup_times_help_against_bare_python():
    from bench import cli_startup

    outcome = cli_startup.run(smoke=True)
    _check_shape(outcome, "cli_startup")
    help_row, ask_help_row = outcome["rows"]
    assert "sunrise --help" in help_row["measure"] and help_row["target"]
    assert "sunrise ask --help" in ask_help_row["measure"]
    walls = outcome["details"]["wall_s"]
    assert all(len(v) == cli_startup.SMOKE_ROUNDS and min(v) > 0 for v in walls.values())
    assert help_row["ratio"] > 0 and ask_help_row["ratio"] > 0


def test_live_engines_times_each_query_against_its_bare_driver():
    from bench import live_engines

    outcome = live_engines.run(smoke=True)
    _check_shape(outcome, "live_engines")
    measures = [r["measure"] for r in outcome["rows"]]
    assert len(measures) == 6 and sum("postgresql" in m for m in measures) == 3
    assert sum(f"{live_engines.SMOKE_HUGE_ROWS:,}-row result" in m for m in measures) == 2
    assert all(r["ratio"] > 0 and r["target"] == "≤ 1.3×" for r in outcome["rows"])
    assert {"psycopg", "PyMySQL"} <= {r["baseline"].split("(")[1].rstrip(")")
                                     for r in outcome["rows"]}
    for sides in outcome["details"]["median_ms"].values():
        assert sides["sunrise_ms"] > 0 and sides["bare_ms"] > 0


def test_live_vs_snapshot_counts_the_bytes_each_way_moves():
    from bench import live_vs_snapshot

    outcome = live_vs_snapshot.run(smoke=True)
    _check_shape(outcome, "live_vs_snapshot")
    first, setup, *per_question = outcome["rows"]
    assert "first answer" in first["measure"] and first["ratio"] > 0
    assert "make the dataset" in setup["measure"] and 0 < setup["ratio"] < 1
    details = outcome["details"]
    live, snapshot = details["live"], details["snapshot"]
    assert snapshot["rows"] == details["table_rows"] == live_vs_snapshot.SMOKE_ROWS
    # The import copied every row through the relay; introspection and a question far less.
    assert snapshot["setup_bytes"] > 20 * live_vs_snapshot.SMOKE_ROWS > live["setup_bytes"] > 0
    assert len(per_question) == len(live_vs_snapshot.QUESTIONS)
    for label, asked in live["per_question"].items():
        assert 0 < asked["bytes"] < snapshot["setup_bytes"]
        assert snapshot["per_question"][label]["bytes"] == 0
        assert asked["rows"] == snapshot["per_question"][label]["rows"]


@pytest.mark.slow
def test_live_spark_times_the_aggregate_against_bare_pyspark_connect():
    from bench import live_spark

    outcome = live_spark.run(smoke=True)
    _check_shape(outcome, "live_spark")
    aggregate, large = outcome["rows"]
    assert "spark, 4-row aggregate" in aggregate["measure"] and aggregate["target"] == "≤ 1.3×"
    assert f"{live_spark.SMOKE_HUGE_ROWS:,}-row result" in large["measure"]
    for figure in (aggregate, large):
        assert "pyspark Connect" in figure["baseline"] and figure["ratio"] > 0
    rounds = {"4-row": live_spark.SMOKE_ROUNDS, "-row result": live_spark.SMOKE_HUGE_ROUNDS}
    for label, sides in outcome["details"]["wall_ms"].items():
        (expected,) = [n for key, n in rounds.items() if key in label]
        assert all(len(v) == expected and min(v) > 0 for v in sides.values())


def test_messy_files_measures_the_corpus_and_both_import_times():
    from bench import messy_files

    outcome = messy_files.run(smoke=True)
    _check_shape(outcome, "messy_files")
    details = outcome["details"]
    assert details["files"] == len(messy_files.SMOKE_FILES) and details["columns"] > 0
    share, silent, wall, cpu = outcome["rows"]
    assert share["value"].endswith("%") and silent["target"] == "0"
    assert wall["ratio"] > 0 and cpu["ratio"] > 0
    assert set(details["per_file"]) == {"airlines.csv", "penguins.csv"}
    assert "Misses" in messy_files.markdown(outcome)


def test_auth_overhead_times_each_way_of_acting_against_the_old_key_check():
    from bench import auth_overhead

    outcome = auth_overhead.run(smoke=True)
    _check_shape(outcome, "auth_overhead")
    measures = [r["measure"] for r in outcome["rows"]]
    assert len(measures) == 4 and any("Sunrise-User" in m for m in measures)
    assert all(r["ratio"] > 0 for r in outcome["rows"])
    samples = outcome["details"]["samples_ms"]
    assert all(len(v) == auth_overhead.SMOKE_ROUNDS and min(v) > 0 for v in samples.values())
