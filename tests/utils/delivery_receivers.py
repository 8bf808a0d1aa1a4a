"""Real receivers for schedule deliveries, on 127.0.0.1: an SMTP server (aiosmtpd) that
keeps every message as a mail client would read it, and an HTTP receiver that records
each POST and answers per path (``status_by_path``; 200 otherwise)."""
from __future__ import annotations

import contextlib
import email
import email.policy
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler

from aiosmtpd.controller import Controller

from tests.utils.http_serving import serving
from tests.utils.sunrise_processes import free_port


@dataclass
class Mailbox:
    port: int
    messages: list[EmailMessage] = field(default_factory=list)
    recipients: list[list[str]] = field(default_factory=list)

    async def handle_DATA(self, server, session, envelope):  # aiosmtpd's handler hook
        self.messages.append(email.message_from_bytes(envelope.content,
                                                      policy=email.policy.default))
        self.recipients.append(list(envelope.rcpt_tos))
        return "250 OK"


@contextlib.contextmanager
def smtp_server() -> Iterator[Mailbox]:
    box = Mailbox(port=free_port())
    controller = Controller(box, hostname="127.0.0.1", port=box.port)
    controller.start()
    try:
        yield box
    finally:
        controller.stop()


@dataclass
class Posted:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    url: str
    status_by_path: dict[str, int] = field(default_factory=dict)
    posts: list[Posted] = field(default_factory=list)

    def at(self, path: str) -> list[Posted]:
        return [p for p in self.posts if p.path == path]


@contextlib.contextmanager
def http_receiver() -> Iterator[Receiver]:
    receiver = Receiver(url="")
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with lock:
                receiver.posts.append(Posted(self.path, dict(self.headers), body))
            status = receiver.status_by_path.get(self.path, 200)
            self.send_response(status)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args) -> None:
            pass

    with serving(Handler) as url:
        receiver.url = url
        yield receiver
