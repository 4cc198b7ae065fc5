"""Limits on request bodies beyond their size.

A JSON body well under the size limit can still nest thousands of levels deep (``[[[[...``
in a few kilobytes). Parsing it works, but every recursive step after that (validation,
redacting the context, rendering the prompt, encoding diagnostics) would hit Python's
recursion limit and answer 500, after the user message was stored. Request bodies are
checked once, up front, without recursion.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_JSON_DEPTH", "check_depth"]

MAX_JSON_DEPTH = 64
"""Deeper than any real context object, far below where recursion becomes a problem."""


def check_depth(value: Any, limit: int = MAX_JSON_DEPTH) -> None:
    """Raise ``ValueError`` when ``value`` nests objects or arrays deeper than ``limit``."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        if depth > limit:
            raise ValueError(f"nested more than {limit} levels deep")
        stack.extend((child, depth + 1) for child in children)
