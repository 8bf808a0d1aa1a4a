"""OpenAPI 3.2 generated from the same pydantic models that validate requests.

3.2, for its ``itemSchema``: each event of a ``text/event-stream`` response is
described (``api/schemas/events.py``) rather than the stream being "a string".
"""
from __future__ import annotations

import dataclasses
from typing import Any

from flask import Blueprint, jsonify
from pydantic import BaseModel

from api.schemas.common import Problem
from api.schemas.events import EventStream
from shared.events import STREAM_ID_PATTERN


@dataclasses.dataclass
class Operation:
    method: str
    path: str
    summary: str
    body: type[BaseModel] | None = None
    # Other media types the body may come as (e.g. multipart/form-data), each its model.
    other_bodies: dict[str, type[BaseModel]] = dataclasses.field(default_factory=dict)
    query: type[BaseModel] | None = None
    responses: dict[int, type[BaseModel] | EventStream | tuple | None] = dataclasses.field(
        default_factory=dict)
    auth: bool = True
    tag: str = "jobs"


class ApiSpec:
    """Collects the documented operations of every blueprint."""

    def __init__(self, title: str, version: str):
        self.title = title
        self.version = version
        self.operations: list[Operation] = []

    def doc(self, method: str, path: str, summary: str, **kw):
        """Decorator recording an operation; the view itself is unchanged."""
        op = Operation(method.lower(), path, summary, **kw)
        self.operations.append(op)
        return lambda view: view

    def build(self) -> dict[str, Any]:
        schemas: dict[str, Any] = {"Problem": _schema(Problem, {})}
        paths: dict[str, dict] = {}
        for op in self.operations:
            entry: dict[str, Any] = {"summary": op.summary, "tags": [op.tag],
                                     "operationId": f"{op.method}_{op.path}".replace("/", "_")
                                     .replace("{", "").replace("}", ""),
                                     "responses": {}}
            params = [{"name": name, "in": "path", "required": True,
                       "schema": {"type": "string"}}
                      for name in _path_params(op.path)]
            if op.query is not None:
                qs = op.query.model_json_schema()
                for name, prop in qs.get("properties", {}).items():
                    params.append({"name": name, "in": "query",
                                   "required": name in qs.get("required", []), "schema": prop})
            if params:
                entry["parameters"] = params
            if op.body is not None:
                entry["requestBody"] = {"required": True, "content": {"application/json": {
                    "schema": {"$ref": f"#/components/schemas/{op.body.__name__}"}}}}
                schemas[op.body.__name__] = _schema(op.body, schemas)
            for media, model in op.other_bodies.items():
                entry["requestBody"]["content"][media] = {
                    "schema": {"$ref": f"#/components/schemas/{model.__name__}"}}
                schemas[model.__name__] = _schema(model, schemas)
            for status, model in op.responses.items():
                entry["responses"][str(status)] = _response(model, schemas)
            for status in ([400, 401, 404, 422, 429, 503] if op.auth else []):
                entry["responses"].setdefault(str(status), _response(Problem, schemas))
            if op.auth:
                entry["security"] = [{"bearer": []}]
            paths.setdefault(op.path, {})[op.method] = entry
        return {
            "openapi": "3.2.0",
            "info": {"title": self.title, "version": self.version},
            "paths": paths,
            "components": {"schemas": schemas, "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"}}},
        }

    def blueprint(self) -> Blueprint:
        bp = Blueprint("openapi", __name__)
        bp.add_url_rule("/openapi.json", "spec", lambda: jsonify(self.build()))
        return bp


def _path_params(path: str) -> list[str]:
    return [part[1:-1] for part in path.split("/") if part.startswith("{")]


def _schema(model: type[BaseModel], schemas: dict) -> dict:
    schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
    for name, sub in schema.pop("$defs", {}).items():
        schemas.setdefault(name, sub)
    return schema


def _response(model, schemas: dict) -> dict:
    if model is None:
        return {"description": "No content"}
    if isinstance(model, tuple):  # (description, media types) of a non-JSON body
        description, *media_types = model
        return {"description": description,
                "content": {m: {"schema": {"type": "object" if m.endswith("json") else "string"}}
                            for m in media_types}}
    if isinstance(model, EventStream):
        return {"description": model.description,
                "content": {"text/event-stream": {"itemSchema": _events(model, schemas)}}}
    schemas.setdefault(model.__name__, _schema(model, schemas))
    mime = "application/problem+json" if model is Problem else "application/json"
    return {"description": model.__doc__ or model.__name__,
            "content": {mime: {"schema": {"$ref": f"#/components/schemas/{model.__name__}"}}}}


def _events(stream: EventStream, schemas: dict) -> dict:
    """One event of ``stream``: a branch per event name, whose ``data`` is JSON of its
    model, and one for names added later (any JSON object, to be ignored)."""
    branches = []
    for name, model in stream.events.items():
        schemas.setdefault(model.__name__, _schema(model, schemas))
        branches.append(_event(name, {"const": name},
                               {"$ref": f"#/components/schemas/{model.__name__}"}))
    branches.append(_event("other", {"not": {"enum": list(stream.events)}}, {"type": "object"}))
    branches[-1]["description"] = "An event added after this version of the API: ignore it."
    return {"oneOf": branches}


def _event(title: str, name: dict, data: dict) -> dict:
    return {"title": title, "type": "object", "required": ["event", "data"], "properties": {
        "event": {"type": "string", **name},
        "id": {"type": "string", "pattern": STREAM_ID_PATTERN},
        "data": {"type": "string", "contentMediaType": "application/json",
                 "contentSchema": data},
    }}
