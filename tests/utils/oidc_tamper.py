"""A man in the middle between Sunrise and the real OpenID provider's back channel.

Sunrise is configured with this proxy as its issuer URL; it forwards every request to
the provider unchanged, except that discovery names the proxy's own token endpoint, and
a token response's ID token goes through ``tamper`` first: ``tamper(claims)`` returns
the claims to send and the key to sign them with (the provider's own key, to prove that
a claim check holds on a correctly signed token; another key, to forge one). With
``tamper`` None the answers pass untouched. The browser still talks to the provider
directly. A ThreadingHTTPServer on 127.0.0.1 whose threads stop with ``close()``.
"""
from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
from joserfc import jwt
from joserfc.jwk import RSAKey

Tamper = Callable[[dict[str, Any]], tuple[dict[str, Any], RSAKey]]
HOP_HEADERS = {"host", "content-length", "connection", "transfer-encoding", "accept-encoding"}


class TamperingProxy:
    def __init__(self, provider):
        self.provider = provider
        self.tamper: Tamper | None = None
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                proxy._forward(self)

            def do_POST(self):
                proxy._forward(self)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(10)

    def _forward(self, handler: BaseHTTPRequestHandler) -> None:
        body = handler.rfile.read(int(handler.headers.get("Content-Length") or 0))
        headers = {k: v for k, v in handler.headers.items() if k.lower() not in HOP_HEADERS}
        upstream = httpx.request(handler.command, self.provider.issuer + handler.path,
                                 headers=headers, content=body, timeout=30)
        content = upstream.content
        if handler.path.startswith("/.well-known/openid-configuration"):
            metadata = upstream.json()
            metadata["token_endpoint"] = self.url + "/token"
            content = json.dumps(metadata).encode()
        elif handler.path.startswith("/token") and upstream.status_code == 200 and self.tamper:
            token = upstream.json()
            claims = dict(jwt.decode(token["id_token"], self.provider.key).claims)
            claims, key = self.tamper(claims)
            token["id_token"] = jwt.encode({"alg": "RS256", "kid": key.kid}, claims, key)
            content = json.dumps(token).encode()
        handler.send_response(upstream.status_code)
        for name in ("content-type", "location", "cache-control"):
            if name in upstream.headers:
                handler.send_header(name, upstream.headers[name])
        handler.send_header("Content-Length", str(len(content)))
        handler.end_headers()
        handler.wfile.write(content)
