"""Parsing request bodies and query strings into schema models."""
from __future__ import annotations

import json
from typing import TypeVar

from flask import request
from pydantic import BaseModel

from shared.errors import BadRequest

M = TypeVar("M", bound=BaseModel)


def parse_body(model: type[M]) -> M:
    """The JSON body validated as ``model``; 400 if it is not JSON, 422 if it is invalid."""
    raw = request.get_data(cache=True)
    try:
        data = json.loads(raw) if raw else None
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest(f"The request body is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise BadRequest("The request body must be a JSON object.")
    return model.model_validate(data)


def parse_query(model: type[M]) -> M:
    """The query string validated as ``model`` (422 on bad values)."""
    return model.model_validate(request.args.to_dict())
