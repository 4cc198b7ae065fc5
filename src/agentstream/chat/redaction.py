"""Keeping secrets out of prompts and diagnostics.

Clients put all sorts of things in a request's ``context``; some of it may be a token or an API
key. Two passes keep those out of what we show the model and what diagnostics return:
:func:`redact` replaces the value of every key that looks like a secret (recursively), and
:class:`Scrubber` replaces known secret *values* (the caller's bearer token, the values found
under secret keys, strings shaped like API keys) wherever they occur inside other strings, such
as a system prompt or a message that quoted one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["REDACTED", "Scrubber", "is_secret_key", "redact", "secret_values"]

REDACTED = "[redacted]"

_SECRET_WORDS = re.compile(
    r"(^|_)(authorization|auth|bearer|token|access_token|refresh_token|id_token|api_?key|"
    r"password|passwd|passphrase|secret|client_secret|cookie|set_cookie|credentials?|"
    r"private_?key|session_?id|signature)($|_)"
)
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_SECRET_SHAPES = re.compile(
    r"(?i:bearer)\s+[A-Za-z0-9._~+/=-]{8,}"  # an Authorization header value
    r"|\bsk-[A-Za-z0-9_-]{12,}"  # OpenAI/Anthropic-style keys
    r"|\bAKIA[0-9A-Z]{16}\b"  # AWS access key ids
    r"|\bAIza[0-9A-Za-z_-]{30,}"  # Google API keys (Gemini)
    r"|\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"  # JWTs
)
_MIN_SECRET_LENGTH = 4
"""Shorter values are not scrubbed from text: replacing every "abc" would mangle prose."""


def is_secret_key(key: str) -> bool:
    """Whether a mapping key names a secret (``api_key``, ``X-Api-Key``, ``accessToken``,
    ``Authorization``...). Counters such as ``max_tokens`` are not secrets."""
    normal = _CAMEL.sub(r"\1_\2", key).lower().replace("-", "_").replace(" ", "_")
    return _SECRET_WORDS.search(normal) is not None


def redact(value: Any) -> Any:
    """A copy of ``value`` with the values of secret-looking keys replaced, at any depth."""
    if isinstance(value, Mapping):
        return {
            str(k): (REDACTED if is_secret_key(str(k)) and v not in (None, "") else redact(v))
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(item) for item in value]
    return value


def secret_values(value: Any) -> list[str]:
    """The string values stored under secret-looking keys in ``value``, at any depth."""
    found: list[str] = []

    def walk(item: Any) -> None:
        if isinstance(item, Mapping):
            for k, v in item.items():
                if is_secret_key(str(k)) and isinstance(v, str | int) and not isinstance(v, bool):
                    found.append(str(v))
                else:
                    walk(v)
        elif isinstance(item, list | tuple):
            for element in item:
                walk(element)

    walk(value)
    return found


class Scrubber:
    """Replaces known secrets and secret-shaped strings inside any JSON-like value."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        known = {s for s in secrets if s and len(s) >= _MIN_SECRET_LENGTH}
        # Longest first, so a secret that contains another is replaced whole.
        self._known = sorted(known, key=len, reverse=True)

    def text(self, text: str) -> str:
        for secret in self._known:
            text = text.replace(secret, REDACTED)
        return _SECRET_SHAPES.sub(REDACTED, text)

    def __call__(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {
                str(k): (REDACTED if is_secret_key(str(k)) and v not in (None, "") else self(v))
                for k, v in value.items()
            }
        if isinstance(value, list | tuple):
            return [self(item) for item in value]
        return value
