"""Sunrise's offline model: an Anthropic Messages API test double over HTTP.

`create_app(config)` builds the ASGI app; `serve(...)` runs it (blocking);
`run_in_thread(port=0, ...)` runs it in the background and returns a handle with
`.base_url` and `.stop()`. See DESIGN.md, "The offline model".
"""

from sunrise.fake_llm.app import create_app
from sunrise.fake_llm.config import FakeLLMConfig
from sunrise.fake_llm.server import ServerHandle, main, run_in_thread, serve

__all__ = ["FakeLLMConfig", "ServerHandle", "create_app", "main", "run_in_thread", "serve"]
