"""Properties of the SSE encoding that every stream relies on."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from jiter import from_json

from sunrise.fake_llm.token_estimate import text_tokens
from sunrise.fake_llm.wire import json_chunks, text_chunks

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(st.text())
def test_text_chunks_rebuild_the_text(text):
    assert "".join(text_chunks(text)) == text


@settings(max_examples=200)
@given(st.dictionaries(st.text(), json_values, max_size=4))
def test_every_json_chunk_prefix_parses_in_partial_mode(tool_input):
    payload = json.dumps(tool_input, ensure_ascii=False)
    chunks = json_chunks(payload)
    assert "".join(chunks) == payload
    buffer = b""
    for chunk in chunks:
        buffer += chunk.encode()
        from_json(buffer, partial_mode=True)  # what the SDK does per input_json_delta
    assert from_json(buffer) == tool_input


@given(st.text())
def test_token_estimate_is_ceil_of_utf8_bytes_over_four(text):
    assert text_tokens(text) == -(-len(text.encode()) // 4)
