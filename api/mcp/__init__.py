"""Sunrise as a Model Context Protocol server.

``tools.py`` defines the tools and resources (on the official SDK) over a backend;
``endpoint.py`` serves them at ``POST /mcp`` (``init_app``) with ``in_process.py`` as
their backend (the API's services, for the request's key) through ``asgi_bridge.py``;
``sunrise mcp`` (``sunrise/mcp_stdio.py``) serves the same tools over stdio. This
package's ``__init__`` imports nothing, so the stdio server loads no Flask.
"""
