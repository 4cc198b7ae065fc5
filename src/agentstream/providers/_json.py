"""JSON as the providers send it: compact, UTF-8 kept as is, always an object for arguments."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["dump_arguments"]


def dump_arguments(arguments: Mapping[str, Any] | None) -> str:
    """Tool-call arguments as the JSON text of an object (``{}`` when there are none)."""
    return json.dumps(dict(arguments or {}), ensure_ascii=False, separators=(",", ":"))
