"""The offline model's server dependencies are an extra (`sunrise[offline]`) the
production image leaves out: without them, the commands that serve it say what to
install instead of failing on an import."""
from __future__ import annotations

import sys

import click
import pytest

from sunrise.offline import offline_server


def test_without_the_offline_extra_serving_the_model_says_what_to_install(monkeypatch):
    for name in [n for n in sys.modules if n.startswith(("sunrise.fake_llm", "starlette"))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "starlette", None)  # as if not installed
    with pytest.raises(click.UsageError, match=r"sunrise\[offline\]"):
        offline_server()


def test_with_it_the_server_is_there():
    assert callable(offline_server().run_in_thread)
