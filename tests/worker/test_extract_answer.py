from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from worker.answer.extraction import (
    TRUNCATED_ANSWER,
    ExtractedAnswer,
    extract_answer,
    find_matching_brace,
    truncated_answer,
)

CORPUS = Path("/work/shared/testdata/JSONTestSuite/test_parsing")
CHART = {"type": "bar", "title": "Flights by carrier", "query_id": 1, "x": "carrier", "y": ["flights"]}
ANSWER = {"answerText": "UA flew the most {{chart:0}}, see {\"braces\"} and \\ too.", "charts": [CHART]}


def test_direct():
    result = extract_answer("  " + json.dumps(ANSWER) + "\n")
    assert result == ExtractedAnswer(ANSWER["answerText"], [CHART], "direct", [])


def test_direct_without_charts():
    result = extract_answer('{"answerText": "Just text."}')
    assert (result.answer_text, result.charts, result.parse_path) == ("Just text.", [], "direct")


@pytest.mark.parametrize("fence", ["```json", "```JSON", "```", "``` json"])
def test_fenced_anywhere_with_prose_stripped(fence, caplog):
    text = f"Here is the answer:\n{fence}\n{json.dumps(ANSWER, indent=2)}\n```\nHope that helps!"
    with caplog.at_level(logging.WARNING, logger="worker.answer.extraction"):
        result = extract_answer(text)
    assert result.parse_path == "fenced"
    assert (result.answer_text, result.charts) == (ANSWER["answerText"], [CHART])
    assert result.stripped_prose == ["Here is the answer:", "Hope that helps!"]
    assert sum("stripped prose" in r.getMessage() for r in caplog.records) == 2


def test_fence_with_other_content_is_skipped_for_a_later_one():
    text = "```sql\nSELECT 1\n```\nthen\n```json\n" + json.dumps(ANSWER) + "\n```"
    assert extract_answer(text).parse_path == "fenced"


def test_anchored_after_leading_prose(caplog):
    text = "Perfect! Now let me summarise the results:\n" + json.dumps(ANSWER) + "\nLet me know {if} more."
    with caplog.at_level(logging.WARNING, logger="worker.answer.extraction"):
        result = extract_answer(text)
    assert result.parse_path == "anchored"
    assert (result.answer_text, result.charts) == (ANSWER["answerText"], [CHART])
    assert result.stripped_prose == ["Perfect! Now let me summarise the results:", "Let me know {if} more."]
    assert any("Perfect!" in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)


def test_anchored_skips_an_unparseable_first_anchor():
    text = 'Draft: {"answerText": oops} Final: {\n  "answerText": "ok {{chart:1}}", "charts": []}'
    result = extract_answer(text)
    assert (result.parse_path, result.answer_text) == ("anchored", "ok {{chart:1}}")


def test_long_prose_is_logged_truncated(caplog):
    prose = "x" * 1000
    with caplog.at_level(logging.WARNING, logger="worker.answer.extraction"):
        result = extract_answer(prose + json.dumps(ANSWER))
    assert result.stripped_prose == [prose]
    message = next(r.getMessage() for r in caplog.records if "stripped prose" in r.getMessage())
    assert len(message) < 400


@pytest.mark.parametrize("text", [
    "UA flew the most flights.",
    '{"answerText": 5, "charts": []}',
    '{"answer": "wrong key"}',
    '{"answerText": "never closed", "charts": [',
    "[1, 2, 3]",
    "",
    "{{chart:0}} only tokens {{chart:1}}",
])
def test_raw_fallback(text):
    result = extract_answer(text)
    assert result == ExtractedAnswer(text.strip(), [], "raw", [])


@pytest.mark.parametrize("charts", ["nope", {"type": "bar"}, [CHART, "x"], None, 3])
def test_charts_must_be_a_list_of_objects(charts):
    result = extract_answer(json.dumps({"answerText": "a", "charts": charts}))
    assert (result.parse_path, result.charts) == ("direct", [])


def test_lone_surrogates_are_replaced():
    result = extract_answer('{"answerText": "bad \\ud800 char"}')
    assert result.answer_text == "bad \ufffd char"
    result.answer_text.encode("utf-8")


@pytest.mark.parametrize("value", [None, b'{"answerText": "b"}', 12])
def test_non_string_input_never_raises(value):
    assert isinstance(extract_answer(value), ExtractedAnswer)


def test_truncated_answer():
    result = truncated_answer()
    assert result == ExtractedAnswer(TRUNCATED_ANSWER, [], "truncated", [])
    assert "narrower question" in result.answer_text


@pytest.mark.parametrize(("text", "start", "end"), [
    ('{"a": "}"}', 0, 9),
    ('x {"a": "\\"}"} y', 2, 13),
    ('{"a": "\\\\"}', 0, 10),
    ('{"a": {"b": "{{chart:0}}"}} }', 0, 26),
    ('{"a": "unterminated}', 0, None),
    ("{{}", 0, None),
    ("no brace", 0, None),
])
def test_brace_walk_known_cases(text, start, end):
    assert find_matching_brace(text, start) == end


CORPUS_FILES = sorted(CORPUS.glob("*.json"))


def test_corpus_is_present():
    assert len(CORPUS_FILES) > 300


@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: p.name)
def test_json_test_suite_never_raises(path):
    text = path.read_bytes().decode("utf-8", errors="replace")
    for candidate in (text, f"Sure! Here you go:\n{text}\nThanks.",
                      f'Answer: {{"answerText": {text}}} end', f"```json\n{text}\n```"):
        result = extract_answer(candidate)
        assert isinstance(result, ExtractedAnswer)
        assert isinstance(result.answer_text, str)
        assert result.parse_path in {"direct", "fenced", "anchored", "raw"}
        assert all(isinstance(chart, dict) for chart in result.charts)


# Lone surrogates are excluded: extraction deliberately replaces them (see
# test_lone_surrogates_are_replaced), so they cannot round-trip.
tricky_text = st.text(
    alphabet=st.one_of(st.sampled_from(list('{}"\\`\n :,')), st.characters(codec="utf-8")),
    max_size=60
) | st.builds(lambda n, s: f"{s}{{{{chart:{n}}}}}{s}", st.integers(0, 9), st.text(max_size=10))
charts_strategy = st.lists(st.fixed_dictionaries({
    "type": st.sampled_from(["bar", "line", "pie"]),
    "title": tricky_text,
    "query_id": st.integers(0, 50),
    "x": tricky_text,
    "y": st.lists(tricky_text, max_size=3),
    "series": st.none() | tricky_text,
}), max_size=3)
prose = st.text(max_size=80).filter(lambda s: '"answerText"' not in s)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(answer=tricky_text, charts=charts_strategy, before=prose, after=prose,
       indent=st.sampled_from([None, 2]), ascii_only=st.booleans())
def test_brace_walk_recovers_the_original_object(answer, charts, before, after, indent, ascii_only):
    obj = {"answerText": answer, "charts": charts}
    payload = json.dumps(obj, indent=indent, ensure_ascii=ascii_only)
    assert find_matching_brace(payload, 0) == len(payload) - 1
    result = extract_answer(before + payload + after)
    assert result.parse_path in {"direct", "fenced", "anchored"}
    assert (result.answer_text, result.charts) == (answer, charts)
