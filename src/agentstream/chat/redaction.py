"""Keeping secrets out of prompts and diagnostics.

Clients put all sorts of things in a request's ``context``; some of it may be a token or an API
key. Two passes keep those out of what we show the model and what diagnostics return:
:func:`redact` replaces the value of every key *named* as a secret (recursively; exact names
from :data:`SECRET_KEYS` or the deployment's own list, never a substring, so a workflow's
``signature`` or ``token_limit`` setting reaches the model as the client sent it), and
:class:`Scrubber` replaces known secret *values* (the caller's bearer token, the values found
under secret keys, strings shaped like API keys) wherever they occur inside other strings, such
as a system prompt or a message that quoted one.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from typing import Any

__all__ = ["REDACTED", "SECRET_KEYS", "Scrubber", "is_secret_key", "redact", "secret_values"]

REDACTED = "[redacted]"

SECRET_KEYS = frozenset(
    {
        "access_token",
        "api_key",
        "apikey",
        "authorization",
        "bearer",
        "client_secret",
        "cookie",
        "credentials",
        "id_token",
        "passphrase",
        "passwd",
        "password",
        "private_key",
        "proxy_authorization",
        "refresh_token",
        "secret",
        "set_cookie",
        "token",
        "x_api_key",
    }
)
"""Key names whose values are secrets, compared after normalising (``X-Api-Key``, ``apiKey``
and ``api_key`` are one name). ``ChatConfig.secret_keys`` replaces the list."""

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


def is_secret_key(key: str, names: AbstractSet[str] = SECRET_KEYS) -> bool:
    """Whether a mapping key is one of ``names`` (``api_key``, ``X-Api-Key``, ``apiKey``,
    ``Authorization``...). ``token_limit``, ``session_id`` or ``signature`` are not."""
    return _normal_key(key) in names


@functools.lru_cache(maxsize=4096)
def _normal_key(key: str) -> str:
    # Cached: the same few keys come back in every request's context.
    return _CAMEL.sub(r"\1_\2", key).lower().replace("-", "_").replace(" ", "_")


def _without_secret_shapes(text: str) -> str:
    if len(text) > _CACHED_TEXT_LENGTH:
        return _SECRET_SHAPES.sub(REDACTED, text)
    return _cached_without_secret_shapes(text)


@functools.lru_cache(maxsize=256)
def _cached_without_secret_shapes(text: str) -> str:
    # Cached: the strings scrubbed (a page's system prompt, its tool list) repeat from one
    # request to the next, and the pattern scans every character.
    return _SECRET_SHAPES.sub(REDACTED, text)


_CACHED_TEXT_LENGTH = 16_384
"""Longer strings are scrubbed afresh: the cache holds at most 256 of these."""


def redact(value: Any, names: AbstractSet[str] = SECRET_KEYS) -> Any:
    """A copy of ``value`` with the values of secret keys replaced, at any depth."""
    if isinstance(value, Mapping):
        return {
            str(k): (
                REDACTED
                if is_secret_key(str(k), names) and v not in (None, "")
                else redact(v, names)
            )
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(item, names) for item in value]
    return value


def secret_values(value: Any, names: AbstractSet[str] = SECRET_KEYS) -> list[str]:
    """The string values stored under secret keys in ``value``, at any depth."""
    found: list[str] = []
    _collect_secrets(value, names, found)
    return found


def _collect_secrets(item: Any, names: AbstractSet[str], found: list[str]) -> None:
    # A function of the module, not a closure over ``found``: a closure that calls itself is
    # a reference cycle, left for the garbage collector on every run.
    if isinstance(item, Mapping):
        for k, v in item.items():
            if (
                is_secret_key(str(k), names)
                and isinstance(v, str | int)
                and not isinstance(v, bool)
            ):
                found.append(str(v))
            else:
                _collect_secrets(v, names, found)
    elif isinstance(item, list | tuple):
        for element in item:
            _collect_secrets(element, names, found)


class Scrubber:
    """Replaces known secrets and secret-shaped strings inside any JSON-like value."""

    def __init__(
        self, secrets: Iterable[str | None] = (), names: AbstractSet[str] = SECRET_KEYS
    ) -> None:
        known = {s for s in secrets if s and len(s) >= _MIN_SECRET_LENGTH}
        # Longest first, so a secret that contains another is replaced whole.
        self._known = sorted(known, key=len, reverse=True)
        self._names = names

    def text(self, text: str) -> str:
        for secret in self._known:
            text = text.replace(secret, REDACTED)
        return _without_secret_shapes(text)

    def __call__(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {
                str(k): (
                    REDACTED
                    if is_secret_key(str(k), self._names) and v not in (None, "")
                    else self(v)
                )
                for k, v in value.items()
            }
        if isinstance(value, list | tuple):
            return [self(item) for item in value]
        return value
