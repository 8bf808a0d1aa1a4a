"""A real OpenID provider for the sign-in tests: ``oidc-provider`` from npm on Node.js.

``tests/oidc_provider/provider.mjs`` runs with the machine's ``node`` on a socket this
process binds on 127.0.0.1 (handed over by fd, so the issuer's port is known before the
provider starts and nothing races for it). Its signing key is made here and handed over,
so a test can also sign tokens *as* the provider (to prove that the other checks hold)
or with another key (a forgery). The provider exits when its stdin closes or after
``max_lifetime_s``; ``stop()`` ends exactly the process started.

Its login page accepts any password for any login; ``ACCOUNTS`` give some logins an
email and groups. ``sign_in(url, login)`` walks the real login and consent forms over
HTTP and returns the callback URL the provider redirects to.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path
from typing import Self

import httpx
from joserfc.jwk import RSAKey

from tests.utils.waiting import wait_for_http_ok

PROVIDER_DIR = Path(__file__).resolve().parents[1] / "oidc_provider"
READY = "ready "
ACCOUNTS = {
    "ada": {"email": "ada@example.test", "groups": ["analysts"]},
    "grace": {"email": "grace@example.test", "groups": ["admins", "analysts"]},
    "linus": {"email": "linus@example.test", "groups": []},
}


class OidcProvider:
    """``with OidcProvider(redirect_uris) as op: op.issuer, op.client_id, …``"""

    def __init__(self, redirect_uris: list[str], *, max_lifetime_s: int = 1800,
                 startup_timeout: float = 60.0):
        self.redirect_uris = list(redirect_uris)
        self.client_id = f"sunrise-{uuid.uuid4().hex[:8]}"
        self.client_secret = uuid.uuid4().hex + uuid.uuid4().hex
        self.key = RSAKey.generate_key(2048, parameters={"kid": "provider-key", "alg": "RS256",
                                                         "use": "sig"}, private=True)
        self.max_lifetime_s = max_lifetime_s
        self.startup_timeout = startup_timeout
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.issuer = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.proc: subprocess.Popen | None = None
        self._log_path: Path | None = None

    def add_redirect_uri(self, uri: str) -> None:
        """Register another callback URL (before ``start``)."""
        self.redirect_uris.append(uri)

    def log_text(self) -> str:
        return self._log_path.read_text(errors="replace") if self._log_path else ""

    def start(self) -> Self:
        node = shutil.which("node")
        if node is None:
            raise RuntimeError("node is missing: scripts/ensure_tools.sh installs Node.js")
        if not (PROVIDER_DIR / "node_modules" / "oidc-provider").is_dir():
            raise RuntimeError(f"oidc-provider is not installed: run `npm ci --prefix "
                               f"{PROVIDER_DIR}` (scripts/ensure_tools.sh does)")
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("OIDC_")},
               "OIDC_FD": str(self.listener.fileno()), "OIDC_ISSUER": self.issuer,
               "OIDC_CLIENT": json.dumps({"client_id": self.client_id,
                                          "client_secret": self.client_secret,
                                          "redirect_uris": self.redirect_uris}),
               "OIDC_JWKS": json.dumps({"keys": [self.key.as_dict(private=True)]}),
               "OIDC_ACCOUNTS": json.dumps(ACCOUNTS),
               "OIDC_MAX_LIFETIME_S": str(self.max_lifetime_s)}
        fd, name = tempfile.mkstemp(prefix="sunrise-oidc-provider-", suffix=".log")
        self._log_path = Path(name)
        with os.fdopen(fd, "wb") as log:
            self.proc = subprocess.Popen(
                [node, str(PROVIDER_DIR / "provider.mjs")], cwd=PROVIDER_DIR, env=env,
                stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT,
                pass_fds=(self.listener.fileno(),))
        self.listener.close()
        try:
            wait_for_http_ok(f"{self.issuer}/.well-known/openid-configuration", self.proc,
                             timeout=self.startup_timeout, what="oidc-provider",
                             log_text=self.log_text)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.stdin.close()  # the provider exits on its own when stdin closes
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        if self._log_path is not None:
            self._log_path.unlink(missing_ok=True)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def sign_in(self, authorization_url: str, login: str) -> str:
        """Walk the provider's real login and consent forms as ``login`` (a fresh
        browser: its own cookies) and return the callback URL it redirects to."""
        with httpx.Client(timeout=30, follow_redirects=False) as browser:
            url = authorization_url
            for _ in range(12):
                if url.startswith(tuple(self.redirect_uris)):
                    return url
                response = browser.get(url)
                if response.is_redirect:
                    url = httpx.URL(url).join(response.headers["location"]).__str__()
                    continue
                url = self._submit_form(browser, url, response.text, login)
            raise RuntimeError(f"the provider never redirected to the client: {url}")

    def _submit_form(self, browser: httpx.Client, url: str, page: str, login: str) -> str:
        action = re.search(r'<form[^>]*action="([^"]+)"', page)
        if action is None:
            raise RuntimeError(f"no form on the provider's page {url}:\n{page[:2000]}")
        fields = dict(re.findall(r'<input[^>]*type="hidden"[^>]*name="([^"]+)"[^>]*value="([^"]*)"',
                                 page))
        if 'name="login"' in page:
            fields.update(login=login, password="any password")
        response = browser.post(httpx.URL(url).join(action.group(1)), data=fields)
        if not response.is_redirect:
            raise RuntimeError(f"the provider's form answered {response.status_code}:\n"
                               f"{response.text[:2000]}")
        return str(httpx.URL(url).join(response.headers["location"]))
