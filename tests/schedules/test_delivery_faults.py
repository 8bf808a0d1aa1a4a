"""Delivery faults, each against a real socket: SMTP down and a webhook that times out are
retried to the bound, each attempt counted and the last error kept; a target the outbound
policy refuses at delivery time is not called at all."""
from __future__ import annotations

import socket
import time
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler

from tests.utils.http_serving import serving
from tests.utils.sunrise_processes import free_port
from worker.schedules.senders import send_email, send_http


def _fast(settings, **extra):
    return settings.model_copy(update={"webhook_max_attempts": 3, "webhook_backoff_s": 0.01,
                                       "webhook_timeout_s": 0.3, **extra})


def test_smtp_down_is_retried_then_failed(base_settings):
    port = free_port()  # nothing listens there
    settings = _fast(base_settings, smtp_url=f"smtp://127.0.0.1:{port}")
    msg = EmailMessage()
    msg["Subject"], msg["From"], msg["To"] = "s", "a@example.com", "b@example.com"
    msg.set_content("x")
    outcome = send_email(settings, msg, "test")
    assert (outcome.status, outcome.attempts) == ("failed", 3)
    assert "Connection" in outcome.last_error or "refused" in outcome.last_error.lower()


def test_a_webhook_that_times_out_is_retried_then_failed(base_settings):
    seen = []

    class Slow(BaseHTTPRequestHandler):
        def do_POST(self):
            seen.append(time.monotonic())
            time.sleep(1.0)
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    with serving(Slow) as url:
        target = {"type": "webhook", "url": f"{url}/h"}
        outcome = send_http(_fast(base_settings), target, 0, b"{}", secret="s", what="test")
    assert (outcome.status, outcome.attempts) == ("failed", 3) and len(seen) == 3
    assert "Timeout" in outcome.last_error


def test_a_target_refused_at_delivery_time_is_not_called(base_settings):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.2)
    try:
        target = {"type": "slack",
                  "webhook_url": f"http://127.0.0.1:{listener.getsockname()[1]}/x"}
        outcome = send_http(_fast(base_settings, outbound_allow=[]), target, 2, b"{}",
                            secret=None, what="test")
        assert outcome.status == "failed" and outcome.attempts == 0
        assert outcome.last_error.startswith("refused: deliver[2].webhook_url")
        try:
            listener.accept()
            called = True
        except TimeoutError:
            called = False
        assert not called
    finally:
        listener.close()
