"""The tool registry and the SQL tool, on the real sample database."""
from __future__ import annotations

import pytest

from shared.errors import JobFailure
from shared.usage_figures import JobFigures
from worker.answer.number_check import Evidence
from worker.jobs.data_source import BuiltInDataset
from worker.jobs.store import ClaimedJob
from worker.tools import ToolBox, ToolContext, definitions

CARRIERS = "SELECT carrier, count(*) AS flights FROM flights GROUP BY 1 ORDER BY 2 DESC"


@pytest.fixture
def box(flights_sandbox, settings):
    figures = JobFigures()
    context = ToolContext(flights_sandbox, settings, figures, Evidence(), lambda: 60.0)
    return ToolBox(context), figures


def test_the_request_lists_the_registered_tools():
    assert [tool["name"] for tool in definitions()] == ["execute_sql"]
    assert definitions()[0]["input_schema"]["required"] == ["sql"]


def test_queries_are_numbered_and_a_repeat_is_answered_from_the_job_cache(box):
    tools, figures = box
    failed = tools.call("execute_sql", {"sql": "SELECT nope FROM flights"})
    assert failed.is_error and failed.query_id is None and failed.text.startswith("error: ")
    first = tools.call("execute_sql", {"sql": CARRIERS})
    again = tools.call("execute_sql", {"sql": f"  {CARRIERS}\n"})
    assert first.query_id == 1 and first.text.startswith("query_id=1 rows=16 shown=16")
    assert (again.cached, again.query_id, again.text) == (True, 1, first.text)
    assert (figures.sql_executed, figures.sql_cache_hits) == (2, 1)
    assert first.input_text == CARRIERS and first.rows == 16
    assert list(tools.chart_sources()) == [1]
    assert tools.chart_sources()[1].rows[0] == ("UA", 58665)


def test_a_malformed_call_is_an_error_for_the_model_not_a_crash(box):
    tools, figures = box
    unknown = tools.call("run_python", {"code": "1"})
    assert unknown.is_error and unknown.tool == "run_python"
    assert unknown.text == "error: unknown tool 'run_python'; the tools are execute_sql"
    missing = tools.call("execute_sql", {"query": "SELECT 1"})
    assert missing.is_error and missing.text == "error: missing 'sql' string input"
    assert missing.input_text == '{"query": "SELECT 1"}'
    assert figures.sql_executed == 0


def test_the_built_in_dataset_serves_no_other_dataset(flights_sandbox, settings):
    data = BuiltInDataset(settings, sandbox=flights_sandbox)
    job = ClaimedJob("j", 1, "c", "How many?", settings.model, 1)
    assert data.for_job(job).system_prompt == data.system_prompt()
    named = ClaimedJob("j", 1, "c", "How many?", settings.model, 1, dataset_id="d-1")
    with pytest.raises(JobFailure) as failure:
        data.for_job(named)
    assert failure.value.code == "dataset_not_found"
