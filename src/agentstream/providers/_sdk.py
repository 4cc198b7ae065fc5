"""What every SDK-backed provider shares: the pipeline around one upstream attempt.

A vendor module implements two things: ``_attempt`` (convert the request, call the SDK, convert
its stream into provider events) and ``_translate`` (its one error boundary). This base class
wraps them the same way for everyone::

    retrying( with_timeouts( boundary( _attempt(request) ) ) )

so retries, timeouts and error translation exist once. Closing the outer iterator closes each
layer in turn, down to the SDK stream, which closes the upstream HTTP response.
"""

from __future__ import annotations

import json
import logging
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Mapping
from contextlib import aclosing
from typing import Any, ClassVar, Generic, TypeVar

import pydantic

from agentstream.providers._errors import MalformedResponse, malformed, transport_error
from agentstream.providers._retry import RetryPolicy, retrying
from agentstream.providers._timeouts import Timeouts, with_timeouts
from agentstream.providers.base import ChatRequest, ProviderError, ProviderEvent
from agentstream.providers.catalog import find_spec

__all__ = ["SDKProvider", "reasoning_budget", "reasoning_effort"]

logger = logging.getLogger("agentstream.providers")

_EFFORT_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 24576}


def reasoning_budget(options: Mapping[str, Any], *, default: int = 8192) -> int | None:
    """Token budget for ``options["reasoning"]``/``options["reasoning_budget"]``, or ``None``
    when reasoning is not requested. Efforts map to budgets for vendors that take tokens."""
    setting = options.get("reasoning")
    budget = options.get("reasoning_budget")
    if setting is None and budget is None:
        return None
    if setting is False:
        return None
    if isinstance(budget, int) and budget > 0:
        return budget
    if isinstance(setting, str):
        return _EFFORT_BUDGETS.get(setting.lower(), default)
    return default


def reasoning_effort(options: Mapping[str, Any]) -> str | None:
    """``options["reasoning"]`` as an effort word (``True`` means ``"medium"``), or ``None``."""
    setting = options.get("reasoning")
    if setting is True:
        return "medium"
    if isinstance(setting, str) and setting:
        return setting.lower()
    return None


ClientT = TypeVar("ClientT")


class SDKProvider(ABC, Generic[ClientT]):
    """Base for the four vendor providers. ``name`` is the model-id prefix; ``vendor`` the
    human name used in error messages.

    The SDK client is made on first use (so a missing key fails as an ``auth`` error of the
    first request, not at start-up) with the SDK's own retries off and our timeouts; a client
    passed in is used as is (its own retry settings included) and belongs to the caller.
    """

    name: ClassVar[str]
    vendor: ClassVar[str]
    _api_key: str | None = None
    """The key given to the constructor, if any (else the SDK reads its environment)."""
    _base_url: str | None = None
    """The endpoint given to the constructor, if any."""

    def __init__(
        self,
        model: str,
        *,
        client: ClientT | None = None,
        timeouts: Timeouts | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        if not model:
            raise ValueError(f"{self.vendor}: a model name is required")
        self.model = model
        self.timeouts = timeouts or Timeouts()
        self.retry = retry or RetryPolicy()
        self._client = client
        self._owns_client = client is None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r})"

    @property
    def client(self) -> ClientT:
        """The vendor SDK's async client."""
        if self._client is None:
            self._require_key()
            self._client = self._make_client()
        return self._client

    def _require_key(self) -> None:
        """Fail as an ``auth`` error naming the variable to set when this provider's
        declaration needs a key that neither the constructor nor the environment gives."""
        spec = find_spec(self.name)
        if spec is None:
            return
        message = spec.missing_key(self._api_key, self._base_url)
        if message is not None:
            raise ProviderError("auth", message)

    async def aclose(self) -> None:
        """Close the connection pool of the SDK client this provider made (a client passed in
        belongs to the caller). The provider makes a new client if used again."""
        if self._owns_client and self._client is not None:
            client, self._client = self._client, None
            await self._close_client(client)

    def stream(self, request: ChatRequest) -> AsyncIterator[ProviderEvent]:
        return retrying(
            lambda: with_timeouts(self._guarded(request), self.timeouts, self.vendor),
            self.retry,
        )

    async def _guarded(self, request: ChatRequest) -> AsyncGenerator[ProviderEvent, None]:
        try:
            async with aclosing(self._attempt(request)) as events:
                async for event in events:
                    yield event
        except ProviderError:
            raise
        except Exception as exc:
            raise self._boundary(exc) from None

    def _boundary(self, exc: Exception) -> ProviderError:
        error = self._translate(exc)
        if error is not None:
            return error
        if isinstance(exc, MalformedResponse):
            return malformed(self.vendor, str(exc))
        if isinstance(exc, json.JSONDecodeError | pydantic.ValidationError | UnicodeDecodeError):
            return malformed(self.vendor, "invalid JSON")
        error = transport_error(self.vendor, exc)
        if error is not None:
            return error
        logger.warning(
            "%s: unexpected %s while streaming", self.vendor, type(exc).__name__, exc_info=exc
        )
        return ProviderError("provider", f"{self.vendor}: unexpected error ({type(exc).__name__})")

    @abstractmethod
    def _attempt(self, request: ChatRequest) -> AsyncGenerator[ProviderEvent, None]:
        """One upstream request: an async generator of provider events."""

    @abstractmethod
    def _translate(self, exc: Exception) -> ProviderError | None:
        """This SDK's exceptions as a :class:`ProviderError`; ``None`` for anything else."""

    @abstractmethod
    def _make_client(self) -> ClientT:
        """A new SDK client with the SDK's retries off and ``self.timeouts`` applied."""

    @abstractmethod
    async def _close_client(self, client: ClientT) -> None:
        """Close ``client``'s connection pool."""

    def _secrets(self) -> Iterable[str]:
        """Values to remove from error messages (the configured key)."""
        return ()
