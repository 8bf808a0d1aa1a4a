"""Validate custom resources (KEDA's, the Prometheus Operator's) against the OpenAPI
schema of their vendored CRD.

kubernetes-validate's offline schemas cover only the built-in kinds, so ScaledObject
and TriggerAuthentication are checked here against the CRDs KEDA itself installs
(``schemas/keda-v2.20.2/``, copied unchanged from the kedacore/keda release), and
PodMonitor and PrometheusRule against the Prometheus Operator's
(``schemas/prometheus-operator-v0.93.0/``). Checked
as the API server would with kubectl's default strict field validation: unknown fields
are errors, ``metadata`` is a valid ObjectMeta, and each CEL rule (``x-kubernetes-
validations``) has a Python twin here; a rule without one fails loudly instead of
being skipped.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import jsonschema
import yaml

SCHEMAS = Path(__file__).resolve().parent / "schemas"
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$")


def _min_le_max(spec: dict) -> bool:
    return spec.get("minReplicaCount", 0) <= spec.get("maxReplicaCount", 100)


# Each CEL rule of the vendored CRDs, as the Python check it stands for.
CEL_RULES: dict[str, Callable[[dict], bool]] = {
    "!has(self.minReplicaCount) || self.minReplicaCount <= (has(self.maxReplicaCount) "
    "? self.maxReplicaCount : 100)": _min_le_max,
}


class CrdValidator:
    """Validators for every kind of the CRDs under ``SCHEMAS`` (one folder per vendored
    release), keyed by (apiVersion, kind)."""

    def __init__(self, directory: Path = SCHEMAS):
        self.schemas: dict[tuple[str, str], dict] = {}
        for path in sorted(directory.glob("*/*.yaml")):
            crd = yaml.safe_load(path.read_text())
            group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
            for version in crd["spec"]["versions"]:
                if version["served"]:
                    schema = version["schema"]["openAPIV3Schema"]
                    self.schemas[(f"{group}/{version['name']}", kind)] = schema

    def kinds(self) -> set[tuple[str, str]]:
        return set(self.schemas)

    def errors(self, obj: dict) -> list[str]:
        """Every way ``obj`` breaks its CRD's schema; [] when it is valid.
        Raises KeyError for a kind no vendored CRD defines."""
        schema = self.schemas[(obj["apiVersion"], obj["kind"])]
        strict = _strict(schema)
        found = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
                 for e in jsonschema.Draft7Validator(strict).iter_errors(obj)]
        found += _metadata_errors(obj.get("metadata", {}))
        for node_schema, node in _walk(schema, obj):
            for rule in node_schema.get("x-kubernetes-validations", []):
                check = CEL_RULES.get(rule["rule"])
                if check is None:
                    found.append(f"CEL rule without a Python twin: {rule['rule']}")
                elif not check(node):
                    found.append(rule["message"])
        return found


def _strict(schema: dict) -> dict:
    """The schema with unknown fields refused wherever the API server would prune them."""
    if not isinstance(schema, dict):
        return schema
    out = {k: (_strict(v) if k in ("items", "additionalProperties") else v)
           for k, v in schema.items() if k != "properties"}
    if "properties" in schema:
        out["properties"] = {k: _strict(v) for k, v in schema["properties"].items()}
        if ("additionalProperties" not in schema
                and not schema.get("x-kubernetes-preserve-unknown-fields")):
            out["additionalProperties"] = False
    return out


def _walk(schema: dict, node) -> Iterator[tuple[dict, object]]:
    yield schema, node
    if isinstance(node, dict):
        for key, child in node.items():
            if key in schema.get("properties", {}):
                yield from _walk(schema["properties"][key], child)
    elif isinstance(node, list) and "items" in schema:
        for child in node:
            yield from _walk(schema["items"], child)


def _metadata_errors(metadata: dict) -> list[str]:
    errors = []
    if not DNS_SUBDOMAIN.match(metadata.get("name", "")):
        errors.append(f"metadata.name {metadata.get('name')!r} is not a DNS subdomain")
    for key, value in (metadata.get("labels") or {}).items():
        if not isinstance(value, str) or not LABEL_VALUE.match(value):
            errors.append(f"label {key}={value!r} is not a valid label value")
    unknown = set(metadata) - {"name", "namespace", "labels", "annotations"}
    if unknown:
        errors.append(f"metadata fields a manifest should not set: {sorted(unknown)}")
    return errors
