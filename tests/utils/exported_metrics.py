"""What Sunrise's scrape targets really export, for the tests that check the dashboard's
queries and the alert rules against it: the API's ``/metrics`` and a worker's metrics port,
each scraped over HTTP as Prometheus would."""
from __future__ import annotations

import re

import httpx
from prometheus_client.parser import text_string_to_metric_families

SUFFIXES = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"),
            "summary": ("_sum", "_count"), "gauge": ("",), "unknown": ("",)}
METRIC = re.compile(r"\b(sunrise_[a-zA-Z0-9_:]*)")
MATCHERS = re.compile(r"\b(sunrise_[a-zA-Z0-9_:]*)\s*\{([^}]*)\}")
LABEL = re.compile(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)")


def exported_from(text: str) -> dict[str, set[str] | None]:
    """Sample name -> its label names (None when the family has no sample yet, so its
    labels are unknown) from Prometheus text ``text``."""
    found: dict[str, set[str] | None] = {}
    for family in text_string_to_metric_families(text):
        for suffix in SUFFIXES[family.type]:
            found.setdefault(family.name + suffix, None)
        for sample in family.samples:
            labels = found.get(sample.name) or set()
            found[sample.name] = labels | set(sample.labels)
    return found


def scrape(url: str) -> dict[str, set[str] | None]:
    resp = httpx.get(url, timeout=30)
    resp.raise_for_status()
    return exported_from(resp.text)


def metric_names_in(expr: str) -> set[str]:
    """The ``sunrise_*`` metric names a PromQL expression reads, plus ``up``."""
    names = set(METRIC.findall(expr))
    if re.search(r"\bup\s*[{\[)]|\bup\s*$", expr):
        names.add("up")
    return names


def unknown_labels(expr: str, exported: dict[str, set[str] | None]) -> list[str]:
    """``metric{label}`` matchers of ``expr`` whose label the exported family does not carry
    (families with no sample yet are not judged)."""
    wrong = []
    for name, inside in MATCHERS.findall(expr):
        labels = exported.get(name)
        if labels is None:
            continue
        wrong += [f"{name}{{{label}}}" for label in LABEL.findall(inside)
                  if label not in labels | {"job", "instance"}]
    return wrong


def exported_by_sunrise(client) -> dict[str, set[str] | None]:
    """Everything Sunrise exports: the API's ``/metrics`` (through the Flask test
    ``client``) and a worker's metrics port (a real server on 127.0.0.1, stopped after)."""
    from prometheus_client import CollectorRegistry

    from shared.metrics import Metrics
    from worker.observability import start_metrics_server

    registry = CollectorRegistry()
    Metrics(registry)
    server = start_metrics_server("127.0.0.1", 0, registry=registry)
    try:
        found = scrape(server.url)
    finally:
        server.stop()
    resp = client.get("/metrics")
    assert resp.status_code == 200
    for name, labels in exported_from(resp.get_data(as_text=True)).items():
        found[name] = labels if found.get(name) is None else found[name] | (labels or set())
    return found
