"""Vocabulary shared by the vendor error boundaries.

Each vendor module has exactly one function that turns that SDK's exceptions into a
:class:`~agentstream.providers.base.ProviderError`. They all classify with the same tables
(HTTP status, vendor error-type string, and the vendors' ways of saying that a request is longer
than the model's window), treat transport failures the same way, and build
their user-facing message with :func:`safe_message`, which truncates the vendor's text and
removes anything that looks like a credential. Nothing here knows a specific SDK, except the
two HTTP libraries the SDKs are built on (``httpx`` and its fork ``httpx2``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass

import httpx
import httpx2

from agentstream.errors import ContextOverflow
from agentstream.providers.base import ErrorKind, ProviderError

__all__ = [
    "MalformedResponse",
    "Overflow",
    "UpstreamError",
    "from_status",
    "incomplete_stream",
    "kind_for_error_type",
    "kind_for_status",
    "malformed",
    "retry_after_seconds",
    "safe_message",
    "scrub",
    "transport_error",
]

_MAX_DETAIL = 300

# Anything shaped like an API key or bearer token, whatever the vendor. The provider's own key
# is removed by value as well; these catch keys echoed in a message that are not ours.
_SECRET_PATTERNS = (
    re.compile(r"sk-[A-Za-z0-9_\-*]{6,}"),
    re.compile(r"AIza[0-9A-Za-z_\-]{10,}"),
    re.compile(r"(?i)bearer\s+[A-Za-z0-9._\-~+/=]+"),
    re.compile(
        r"(?i)(api[_-]?key|x-api-key|x-goog-api-key|token)([\"']?\s*[:=]\s*[\"']?)[^\s\"',}]+"
    ),
)


class UpstreamError(ProviderError):
    """A :class:`ProviderError` that also carries the upstream's ``Retry-After`` hint, in
    seconds, for the retry policy. (A subclass, so the shared contract stays unchanged.)"""

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        status_code: int | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(kind, message, status_code=status_code, retryable=retryable)
        self.retry_after = retry_after


def retry_after_seconds(headers: object) -> float | None:
    """``Retry-After`` (or OpenAI's ``retry-after-ms``) as seconds; HTTP dates are ignored."""
    get = getattr(headers, "get", None)
    if get is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except (TypeError, ValueError):
            continue
        if 0 <= seconds < 3600:
            return seconds
    return None


class MalformedResponse(Exception):
    """The upstream sent something that is not the vendor's protocol (raised by our stream
    converters; the boundary turns it into a ``provider`` error)."""


def kind_for_status(status: int) -> ErrorKind:
    if status in (401, 402, 403):
        return "auth"
    if status == 429:
        return "rate_limited"
    if status in (503, 529):
        return "overloaded"
    if status in (408, 504):
        return "timeout"
    if 400 <= status < 500:
        return "bad_request"
    return "provider"


_TYPE_KINDS: tuple[tuple[str, ErrorKind], ...] = (
    ("rate_limit", "rate_limited"),
    ("resource_exhausted", "rate_limited"),
    ("quota", "rate_limited"),
    ("overloaded", "overloaded"),
    ("unavailable", "overloaded"),
    ("authentication", "auth"),
    ("unauthenticated", "auth"),
    ("permission", "auth"),
    ("billing", "auth"),
    ("invalid", "bad_request"),
    ("not_found", "bad_request"),
    ("failed_precondition", "bad_request"),
    ("timeout", "timeout"),
    ("deadline", "timeout"),
)


def kind_for_error_type(error_type: str | None) -> ErrorKind | None:
    """Classify a vendor's error type string (``overloaded_error``, ``RESOURCE_EXHAUSTED``,
    ``rate_limit_exceeded``...). ``None`` when the string says nothing we recognise."""
    if not error_type:
        return None
    lowered = error_type.lower()
    for needle, kind in _TYPE_KINDS:
        if needle in lowered:
            return kind
    return None


_OVERFLOW_TYPES = ("context_length_exceeded", "exceed_context_size", "context_window_exceeded")
"""Error types and codes that mean the request does not fit: OpenAI's code (Chat Completions
and a Responses stream's ``response.failed``), llama.cpp's (and so Ollama's) type."""

_OVERFLOW_MESSAGES: tuple[re.Pattern[str], ...] = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        # Anthropic: "prompt is too long: 208310 tokens > 200000 maximum"
        r"prompt is too long: (?P<requested>\d+) tokens > (?P<window>\d+) maximum",
        # Anthropic: "input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000"
        r"exceed context limit: (?P<requested>\d+) \+ \d+ > (?P<window>\d+)",
        # OpenAI Chat Completions, vLLM and most compatible servers: "This model's maximum
        # context length is 128000 tokens. However, your messages resulted in 130532 tokens"
        r"maximum context length is (?P<window>\d+) tokens"
        r"(?:.*?(?:resulted in|requested) (?P<requested>\d+) tokens)?",
        # Gemini: "The input token count (1200000) exceeds the maximum number of tokens
        # allowed (1048576)."
        r"input token count \((?P<requested>\d+)\) exceeds the maximum number of tokens"
        r" allowed \((?P<window>\d+)\)",
        # llama.cpp and Ollama: "request (351 tokens) exceeds the available context size
        # (256 tokens), try increasing it"
        r"request \((?P<requested>\d+) tokens\) exceeds the available context size"
        r" \((?P<window>\d+) tokens\)",
        # Older llama.cpp, with the sizes as fields of the body ("n_ctx": 4096)
        r"exceeds the available context size(?:.*?\bn_ctx\W+(?P<window>\d+))?",
        # OpenAI Responses: "Your input exceeds the context window of this model."
        r"exceeds the context window",
    )
)


@dataclass(frozen=True, slots=True)
class Overflow:
    """What a vendor's context-length error says: the window and the refused size, when it
    states them."""

    window: int | None = None
    requested: int | None = None


def overflow(error_type: str | None, detail: object) -> Overflow | None:
    """The context-length error in a vendor's type string or message, or ``None``. Every
    vendor says it differently (and several compatible servers copy OpenAI's words), so
    the shapes live here, once, rather than in each vendor's boundary."""
    text = _detail_text(detail) if detail is not None else ""
    for pattern in _OVERFLOW_MESSAGES:
        match = pattern.search(text)
        if match is not None:
            found = match.groupdict()
            return Overflow(_number(found.get("window")), _number(found.get("requested")))
    lowered = (error_type or "").lower()
    if any(code in lowered for code in _OVERFLOW_TYPES):
        return Overflow()
    return None


def _number(value: str | None) -> int | None:
    return int(value) if value else None


_RETRYABLE_KINDS: frozenset[ErrorKind] = frozenset({"rate_limited", "overloaded"})

_TITLES: dict[ErrorKind, str] = {
    "auth": "authentication failed",
    "rate_limited": "rate limit reached",
    "overloaded": "service overloaded",
    "bad_request": "request rejected",
    "context_overflow": "the conversation is longer than the model's context window",
    "timeout": "request timed out",
    "network": "could not reach the service",
    "provider": "service error",
}


def safe_message(
    vendor: str, kind: ErrorKind, detail: object = None, *, secrets: Iterable[str] = ()
) -> str:
    """``"<Vendor>: <what happened> (<vendor detail>)"`` with credentials removed and the detail
    cut to a few hundred characters, so it can be shown to a user and logged."""
    text = f"{vendor}: {_TITLES[kind]}"
    if detail is not None:
        cleaned = scrub(_detail_text(detail), secrets)
        if cleaned:
            if len(cleaned) > _MAX_DETAIL:
                cleaned = cleaned[: _MAX_DETAIL - 1] + "…"
            text = f"{text} ({cleaned})"
    return text


def scrub(text: str, secrets: Iterable[str] = ()) -> str:
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "[redacted]")
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub(_redact_match, text)
    return " ".join(text.split())


def _redact_match(match: re.Match[str]) -> str:
    if match.re.groups >= 2:  # keep the field name, drop its value
        return f"{match.group(1)}{match.group(2)}[redacted]"
    return "[redacted]"


def _detail_text(detail: object) -> str:
    if isinstance(detail, str):
        return detail
    try:
        return json.dumps(detail, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(detail)


def from_status(
    vendor: str,
    status: int | None,
    *,
    error_type: str | None = None,
    detail: object = None,
    secrets: Iterable[str] = (),
    retry_after: float | None = None,
) -> ProviderError:
    """The error for an HTTP status and/or a vendor error type. A specific status (401, 429,
    503...) decides; a generic one (400, 500) or none at all (an error inside a 200 stream)
    defers to the type string when it says more (``overloaded_error``, ``RESOURCE_EXHAUSTED``),
    and a request longer than the model's window is a :class:`ContextOverflow`.
    """
    kind = kind_for_status(status) if status is not None and status >= 400 else "provider"
    if kind in ("bad_request", "provider"):
        found = overflow(error_type, detail)
        if found is not None:
            return ContextOverflow(
                safe_message(vendor, "context_overflow", detail, secrets=secrets),
                window=found.window,
                requested=found.requested,
                status_code=status,
            )
        kind = kind_for_error_type(error_type) or kind
    # "provider" only arises for 5xx or an error inside an open stream: both worth a retry.
    retryable = kind in _RETRYABLE_KINDS or kind == "provider"
    return UpstreamError(
        kind,
        safe_message(vendor, kind, detail, secrets=secrets),
        status_code=status,
        retryable=retryable,
        retry_after=retry_after,
    )


def transport_error(vendor: str, exc: BaseException) -> ProviderError | None:
    """Network-level failures from ``httpx``/``httpx2`` (and the OS), which the SDKs let through
    once a stream is open. Connection failures are retryable; a read cut short is too, but the
    retry helper never retries once output has been produced."""
    timeout_types = (httpx.TimeoutException, httpx2.TimeoutException, TimeoutError)
    if isinstance(exc, timeout_types):
        return ProviderError("timeout", safe_message(vendor, "timeout"), retryable=True)
    network_types = (httpx.TransportError, httpx2.TransportError, ConnectionError, OSError)
    if isinstance(exc, network_types):
        return ProviderError("network", safe_message(vendor, "network"), retryable=True)
    return None


def malformed(vendor: str, what: str = "unreadable response") -> ProviderError:
    return ProviderError("provider", f"{vendor}: malformed stream ({what})")


def incomplete_stream(vendor: str) -> ProviderError:
    """The upstream closed the stream before saying it was finished."""
    return ProviderError(
        "network", f"{vendor}: the response ended before the model finished", retryable=True
    )
