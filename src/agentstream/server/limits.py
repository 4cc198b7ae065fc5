"""Limits on request bodies beyond their size.

A JSON body well under the size limit can still nest thousands of levels deep (``[[[[...``
in a few kilobytes). Parsing it works, but every recursive step after that (validation,
redacting the context, rendering the prompt, encoding diagnostics) would hit Python's
recursion limit and answer 500, after the user message was stored.

JSON may also spell a lone UTF-16 surrogate (``"a\\ud800b"``): valid JSON, and Python reads
it into a ``str``, but no UTF-8 text can hold it, so the store (and any vendor request) fails
to encode it long after the request was accepted.

Request bodies are checked once, up front, without recursion, and a problem is a 400 naming
the field, as the client spelled it.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic_core import PydanticCustomError

from agentstream.errors import RefusedRequest

__all__ = ["BODY_PROBLEM", "MAX_JSON_DEPTH", "check_body", "validate_body"]

MAX_JSON_DEPTH = 64
"""Deeper than any real context object, far below where recursion becomes a problem."""

BODY_PROBLEM = "body_problem"
"""The pydantic error type of :func:`validate_body`; its context names the field."""

_SURROGATE = re.compile("[\ud800-\udfff]")
"""A code point of the surrogate range: in a Python ``str`` always a lone one (JSON's
``"\\ud83d\\ude00"`` pair is read as the one character it encodes)."""


def check_body(value: Any, limit: int = MAX_JSON_DEPTH) -> None:
    """Raise :class:`~agentstream.errors.RefusedRequest` when ``value`` (parsed JSON) nests
    objects or arrays deeper than ``limit`` (field ``body``), or holds a lone surrogate in a
    string (the field it is in; for an object key, the object)."""
    stack: list[tuple[Any, int, str]] = [(value, 1, "")]
    while stack:
        item, depth, path = stack.pop()
        if isinstance(item, str):
            if not item.isascii() and _SURROGATE.search(item):
                raise RefusedRequest(
                    path or "body",
                    "holds a lone UTF-16 surrogate (\\ud800 to \\udfff), which is not a character",
                )
            continue
        if isinstance(item, dict):
            children: Any = item.items()
        elif isinstance(item, list | tuple):
            children = enumerate(item)
        else:
            continue
        if depth > limit:
            raise RefusedRequest("body", f"nested more than {limit} levels deep")
        for key, child in children:
            if isinstance(key, str) and not key.isascii() and _SURROGATE.search(key):
                stack.append((key, depth + 1, path))
            stack.append((child, depth + 1, f"{path}.{key}" if path else str(key)))


def validate_body(data: Any) -> Any:
    """:func:`check_body` for a pydantic ``model_validator(mode="before")``: its refusal as a
    validation error whose context names the field (see
    :func:`agentstream.server.errors.validation_error_body`)."""
    try:
        check_body(data)
    except RefusedRequest as exc:
        raise PydanticCustomError(
            BODY_PROBLEM, "{message}", {"field": exc.field, "message": str(exc)}
        ) from None
    return data
