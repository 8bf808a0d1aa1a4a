"""Parsing request bodies and query strings into schema models."""
from __future__ import annotations

from typing import TypeVar

import jiter
from flask import request
from pydantic import BaseModel

from shared.errors import BadRequest

M = TypeVar("M", bound=BaseModel)


def parse_body(model: type[M]) -> M:
    """The JSON body validated as ``model``; 400 if it is not JSON, 422 if it is invalid.

    Parsed strictly (jiter): no NaN or Infinity, no lone surrogate escapes (text that
    is not Unicode cannot be stored or sent on), and at most a couple of hundred levels
    of nesting -- no request of this API nests more than a few.
    """
    raw = request.get_data(cache=True)
    try:
        data = jiter.from_json(raw, allow_inf_nan=False) if raw else None
    except ValueError as exc:
        reason = ("it is nested too deeply" if "recursion limit" in str(exc)
                  else f"not valid JSON: {exc}")
        raise BadRequest(f"The request body is {reason}.") from None
    if not isinstance(data, dict):
        raise BadRequest("The request body must be a JSON object.")
    return model.model_validate(data)


def parse_query(model: type[M]) -> M:
    """The query string validated as ``model`` (422 on bad values)."""
    return model.model_validate(request.args.to_dict())
