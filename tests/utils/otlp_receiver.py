"""A real OTLP/HTTP trace receiver on 127.0.0.1 for the tests: it decodes the protobuf
``ExportTraceServiceRequest`` each exporter POSTs to ``/v1/traces`` and keeps the spans.

    with OtlpReceiver() as receiver:   # receiver.endpoint -> OTEL_EXPORTER_OTLP_ENDPOINT
        ...
        spans = receiver.wait_for(lambda spans: ..., timeout=30)
"""
from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue


@dataclass
class ReceivedSpan:
    name: str
    trace_id: str
    span_id: str
    parent_id: str
    kind: int
    service: str
    attributes: dict[str, Any] = field(default_factory=dict)
    status_code: int = 0


def _value(v: AnyValue) -> Any:
    which = v.WhichOneof("value")
    if which == "array_value":
        return [_value(x) for x in v.array_value.values]
    return getattr(v, which) if which else None


class OtlpReceiver:
    def __init__(self) -> None:
        self.spans: list[ReceivedSpan] = []
        self.requests = 0
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                if self.path != "/v1/traces":
                    self.send_error(404)
                    return
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                receiver._take(request)
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *_args) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def _take(self, request: ExportTraceServiceRequest) -> None:
        found = []
        for resource_spans in request.resource_spans:
            resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    found.append(ReceivedSpan(
                        name=span.name, trace_id=span.trace_id.hex(), span_id=span.span_id.hex(),
                        parent_id=span.parent_span_id.hex(), kind=span.kind,
                        service=resource.get("service.name", ""),
                        attributes={a.key: _value(a.value) for a in span.attributes},
                        status_code=span.status.code))
        with self._lock:
            self.requests += 1
            self.spans.extend(found)

    def snapshot(self) -> list[ReceivedSpan]:
        with self._lock:
            return list(self.spans)

    def wait_for(self, done: Callable[[list[ReceivedSpan]], bool],
                 timeout: float = 30.0) -> list[ReceivedSpan]:
        """The spans received once ``done(spans)`` holds; AssertionError after ``timeout``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            spans = self.snapshot()
            if done(spans):
                return spans
            time.sleep(0.05)
        raise AssertionError(f"spans not received in {timeout} s: "
                             f"{[(s.service, s.name) for s in self.snapshot()]}")

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *_exc) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)
