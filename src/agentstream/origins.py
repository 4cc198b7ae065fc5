"""Web origins as a browser sends and compares them: ``scheme://host[:port]``, nothing more.

Where a deployment names sites (the origins allowed to call the API, the sites the chat UI
opens without asking), a path or a trailing slash would never match what the browser
compares, and fail later with no reason given; so a configured origin is checked as it is
read, with :func:`is_origin`.
"""

from __future__ import annotations

import re

__all__ = ["LOOPBACK_ORIGIN", "is_origin"]

LOOPBACK_ORIGIN = r"https?://(localhost|127\.0\.0\.1|\[::1\])(:\d+)?"
"""Origins of pages served from this machine."""

_ORIGIN = re.compile(r"https?://(\[[0-9a-fA-F:.]+\]|[^\s/?#:\[\]@]+)(:\d{1,5})?")


def is_origin(text: str) -> bool:
    """Whether ``text`` is a bare ``http(s)`` origin (``https://app.example.com:8443``)."""
    return _ORIGIN.fullmatch(text) is not None
