"""The prompt-cache simulation, observed through `usage` in real SDK responses."""

from __future__ import annotations

MODEL = "claude-sonnet-4-6"
BIG_SYSTEM = "Schema line. " * 500  # 6500 bytes -> 1625 tokens
BIG_TOOL_DOC = "Tool documentation. " * 300  # > 1024 tokens on its own
QUESTION = [{"role": "user", "content": "How many flights are there?"}]


def _call(client, system: str = BIG_SYSTEM, ttl: str | None = None, model: str = MODEL, **extra):
    cache_control = {"type": "ephemeral", **({"ttl": ttl} if ttl else {})}
    request = {
        "model": model,
        "max_tokens": 100,
        "system": [{"type": "text", "text": system, "cache_control": cache_control}],
        "messages": QUESTION,
        **extra,
    }
    return client.messages.create(**request).usage


def _system_tokens(system: str = BIG_SYSTEM) -> int:
    return -(-len(system.encode()) // 4)


def test_first_call_writes_identical_second_call_reads(client):
    first = _call(client)
    assert first.cache_creation_input_tokens == _system_tokens()
    assert first.cache_creation.ephemeral_5m_input_tokens == _system_tokens()
    assert first.cache_read_input_tokens == 0
    assert first.input_tokens == 7  # the question alone: ceil(27 / 4)

    second = _call(client)
    assert second.cache_read_input_tokens == _system_tokens()
    assert second.cache_creation_input_tokens == 0
    assert second.input_tokens == first.input_tokens


def test_one_byte_change_in_the_system_prompt_misses(client):
    _call(client)
    changed = _call(client, system=BIG_SYSTEM[:-1] + "!")
    assert changed.cache_read_input_tokens == 0
    assert changed.cache_creation_input_tokens == _system_tokens()


def test_ttl_expires_on_the_simulated_clock_and_hits_refresh_it(client, control):
    _call(client)
    control.post("/clock", json={"advance_s": 299})
    assert _call(client).cache_read_input_tokens > 0  # hit, and the TTL restarts
    control.post("/clock", json={"advance_s": 299})
    assert _call(client).cache_read_input_tokens > 0
    control.post("/clock", json={"advance_s": 301})
    expired = _call(client)
    assert expired.cache_read_input_tokens == 0
    assert expired.cache_creation_input_tokens == _system_tokens()


def test_one_hour_ttl(client, control):
    first = _call(client, ttl="1h")
    assert first.cache_creation.ephemeral_1h_input_tokens == _system_tokens()
    assert first.cache_creation.ephemeral_5m_input_tokens == 0
    control.post("/clock", json={"advance_s": 1800})
    assert _call(client, ttl="1h").cache_read_input_tokens == _system_tokens()
    control.post("/clock", json={"advance_s": 3601})
    assert _call(client, ttl="1h").cache_read_input_tokens == 0


def test_prefix_below_the_model_minimum_is_not_cached(client):
    small = "Short prompt. " * 100  # 350 tokens < 1024
    for _ in range(2):
        usage = _call(client, system=small)
        assert usage.cache_creation_input_tokens == usage.cache_read_input_tokens == 0
        assert usage.input_tokens == _system_tokens(small) + 7
    # 1625 tokens: enough for Sonnet (1024), not for Haiku (2048).
    for _ in range(2):
        haiku = _call(client, model="claude-haiku-4-5")
        assert haiku.cache_creation_input_tokens == haiku.cache_read_input_tokens == 0


def test_cache_is_scoped_by_model(client):
    _call(client)
    assert _call(client, model="claude-opus-4-7").cache_read_input_tokens == 0


def test_multiple_breakpoints_hit_the_longest_cached_prefix(client):
    tools = [
        {
            "name": "execute_sql",
            "description": BIG_TOOL_DOC,
            "input_schema": {"type": "object", "properties": {"sql": {"type": "string"}}},
            "cache_control": {"type": "ephemeral"},
        }
    ]
    first = _call(client, tools=tools)
    tools_tokens = first.cache_creation_input_tokens - _system_tokens()
    assert tools_tokens > 1024

    other_system = BIG_SYSTEM.replace("Schema", "Tables")
    changed = _call(client, system=other_system, tools=tools)
    assert changed.cache_read_input_tokens == tools_tokens
    assert changed.cache_creation_input_tokens == _system_tokens(other_system)

    both = _call(client, system=other_system, tools=tools)
    assert both.cache_read_input_tokens == tools_tokens + _system_tokens(other_system)
    assert both.cache_creation_input_tokens == 0


def test_breakpoint_on_the_conversation_caches_the_whole_prefix(client):
    history = [
        {"role": "user", "content": "Earlier question " * 300},
        {"role": "assistant", "content": "Earlier answer."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "And now?", "cache_control": {"type": "ephemeral"}},
            ],
        },
    ]
    first = client.messages.create(model=MODEL, max_tokens=50, messages=history)
    assert first.usage.input_tokens == 0 and first.usage.cache_creation_input_tokens > 1024
    second = client.messages.create(model=MODEL, max_tokens=50, messages=history)
    assert second.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens
